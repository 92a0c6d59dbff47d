"""The reading core: text read into findings, with no model call, no memory and no rendering.

- text primitives: :mod:`.text` (sentences, terms and the tokenizer retrieval shares, section roles),
  :mod:`.abbreviations` (the Schwartz–Hearst detector), :mod:`.lexicon` (the vocabularies in ``lexicons/*.toml``);
- the question and an abstract: :mod:`.question`, :mod:`.frame`, :mod:`.entities`, :mod:`.synonyms`,
  :mod:`.vocabulary`, :mod:`.designs`, :mod:`.answer_features`, :mod:`.alignment` (with ``fitted/alignment_gate/``);
- a study's full text: :mod:`.studies` (the study record, and what it found for an (intervention, comparator,
  outcome));
- learned models: :mod:`.linear` (a TF-IDF vectoriser, softmax and listwise models scored with numpy;
  ``bench/fitting.py`` fits them, outside the package), :mod:`.study_reader` (the study reader's
  weights, its conclusion head's with them, ``fitted/study_reader/``), :mod:`.answer_model` and :mod:`.gate` (the
  conclusion head's and the alignment gate's fitted forms), :mod:`.shipped` (each fitted model's folder,
  ``fitted/NAME/``: weights and data card) and :mod:`.readers` (the fits a run reads with, the shipped ones unless its
  session carries others).

Imports only the leaves (models, study, errors) and numpy: agents, claims, conflicts, certainty and the report use
it; it uses none of them. Memory's BM25 index and the JATS parser take their tokenizer and section roles from
:mod:`.text`.
"""

from .study_reader import StudyReader, study_reader

__all__ = ["StudyReader", "load_shipped_models", "study_reader"]


def load_shipped_models() -> None:
    """Read the fitted models every research run uses (the question tagger, the study reader with its conclusion
    head, the sentence roles, the outcome names, the alignment gate: about 0.25 s of JSON; and the tagger's encoder,
    an ONNX session of about 0.2 s) now, so that a run's first question and first reading do not wait for them; the
    composition root calls it in a thread while the store opens. Each is read once per process."""
    from .alignment import fitted_gate
    from .outcome_names import name_model
    from .question_parts import question_tagger
    from .roles import role_model

    question_tagger()
    study_reader()
    role_model()
    name_model()
    fitted_gate()
