"""The cue vector the answer model reads: what an abstract's conclusion says to a yes/no question, as numbers.

The same code runs when the model is fitted (``bench/fit_answer_model.py``) and when a run reads an item. Groups:

- **conclusion cues** (:data:`_CUES`), counted over the conclusion and over its sentence closest to the question:
  negation, "no difference", hedging, positive findings, strong wording, contrast, p-values, similarity, "unlikely";
- **the kind of question** (:data:`_QUESTION_KINDS`): sceptical ("really", "always", "necessary"), sameness
  ("same", "different"), knowledge or adherence ("aware", "meet the guidelines"), association, benefit;
- **evaluative wording of the conclusion** (:data:`_CONCLUSION_WORDS`): negative evaluation ("poor", "deficit",
  "disappointing", "little"), difference, sameness, positive evaluation, hedging — and four products of a question
  kind with the wording that answers it (a "same?" question met by difference words reads *no*);
- **negation scope over the question's terms**: how often a term the question asks about follows a negation
  within six words, how often it stands free, whether the first sentence negates, and explicit null phrases
  ("regardless of", "independent of", "no significant difference").

Every value is taken as ``log1p``: a count's first occurrences say more than its later ones (5-fold CV accuracy
0.754 against 0.748 for raw counts, averaged over six fold assignments; see ``bench/fit_answer_model.py``).
"""

from __future__ import annotations

import re

import numpy as np

from .text import split_sentences, terms

_CUES = {
    "negation": r"\b(?:no|not|neither|nor|without|none|cannot|failed?|lack(?:ed|s)?|absence)\b|n't\b",
    "no_difference": r"\b(?:no|not)\s+(?:\w+\s+){0,3}(?:significant|signific|differ|associat|effect|improv|increas|"
    r"reduc|benefit|related|predict|correlat)",
    "hedge": r"\b(?:may|might|could|possibl[ey]|suggests?|appears?|seems?|unclear|uncertain|inconclusive|"
    r"further|warrant\w*|larger|needed|limited|controversial|remains?)\b",
    "positive": r"\b(?:significant(?:ly)?|effective|improv\w*|increas\w*|reduc\w*|decreas\w*|associated|benefit\w*|"
    r"safe|feasible|superior|predict\w*|correlat\w*|higher|lower|better)\b",
    "strong": r"\b(?:clearly|strongly|confirm\w*|demonstrat\w*|show(?:s|ed|n)?|indicat\w*|conclude\w*)\b",
    "contrast": r"\b(?:however|but|although|whereas|while)\b",
    "p_value": r"\bp\s*[<=]\s*0?\.0[0-5]",
    "aux_not": r"\b(?:do|does|did|is|are|was|were|could|can|should)\s+not\b|n't\b",
    "similar": r"\b(?:similar|comparable|equivalent|equally|same|non-?inferior)\b",
    "unlikely": r"\b(?:unlikely|no evidence|insufficient|not support\w*|not recommended)\b",
}
_QUESTION_KINDS = {
    "sceptical": r"\b(?:really|always|ideal|truly|myth|worth|adequate\w*|still|justified|enough|realistic|necessary|"
    r"required|need(?:ed)?|mandatory|routine\w*|essential|any)\b",
    "sameness": r"\b(?:same|similar|equal\w*|equivalent|comparable|identical|different|differ\w*)\b",
    "knowledge": r"\b(?:know|aware|awareness|understand\w*|meet|adhere\w*|follow\w*|comply|compliance)\b",
    "association": r"\b(?:predict\w*|associat\w*|correlat\w*|related|relationship|risk factors?|influence\w*|"
    r"affect\w*|impact)\b",
    "benefit": r"\b(?:safe|feasible|effective|efficacious|useful|beneficial|improve\w*|reduce\w*|increase\w*)\b",
}
_CONCLUSION_WORDS = {
    "negative_evaluation": r"\b(?:poor\w*|deficit\w*|little|low|weak\w*|disappoint\w*|doubt\w*|limited|small|"
    r"inadequate\w*|insufficient\w*|fail\w*|lack\w*|unsatisf\w*|underutili\w*|suboptimal|rarely|few|minor|trivial|"
    r"independent|unrelated|discomfort|complication\w*|neither|nor|only|remain\w*|unable|unlikely|questionable|not)\b",
    "difference": r"\b(?:differ\w*|higher|lower|longer|shorter|greater|less|more|heavier|larger|smaller|worse|better|"
    r"outperform\w*)\b",
    "sameness": r"\b(?:same|similar|equal\w*|equivalent|comparable|identical|no difference|not differ\w*)\b",
    "positive_evaluation": r"\b(?:significant\w*|effective\w*|safe|feasible|useful|valuable|beneficial|good|"
    r"excellent|high\w*|well|successful\w*|accurate\w*|reliable|important|associated|predict\w*)\b",
    "hedging": r"\b(?:may|might|could|possibl\w*|unclear|uncertain|inconclusive|further|warrant\w*|needed|"
    r"controvers\w*|remains? to be|not clear|larger|prospective|more studies|additional)\b",
}
_NULL_PHRASES = re.compile(r"\b(?:regardless|irrespective|independent(?:ly)? of|unrelated|no (?:significant )?"
                           r"(?:difference|association|effect|benefit|correlation|relationship))\b", re.I)
_NEGATOR = re.compile(r"^(?:no|not|never|neither|nor|without|none|cannot|failed|fail|fails|lack|lacks|lacked|"
                      r"absence|unable|regardless|irrespective|independent|unrelated|n't|nothing|minimal|little|"
                      r"poor|poorly)$")
_WORD = re.compile(r"[A-Za-z0-9']+")
_SCOPE = 6
"""A question term within this many words after a negation reads as negated."""

_PATTERNS = {name: re.compile(pattern, re.I) for name, pattern in _CUES.items()}
_KINDS = {name: re.compile(pattern, re.I) for name, pattern in _QUESTION_KINDS.items()}
_WORDING = {name: re.compile(pattern, re.I) for name, pattern in _CONCLUSION_WORDS.items()}
_COMPARATIVE = re.compile(r"\b(?:differ\w*|better|more|less|superior|worse|compared|versus|vs)\b", re.I)
_ANSWERS = (("sameness", "difference"), ("sameness", "sameness"), ("knowledge", "negative_evaluation"),
            ("sceptical", "negative_evaluation"))
"""(question kind, conclusion wording) pairs whose product is a feature."""

FEATURES = (
    *_CUES, *(f"best_{cue}" for cue in _CUES), "q_negation", "q_comparative", "overlap", "words",
    *(f"q_{kind}" for kind in _QUESTION_KINDS), *(f"c_{words}" for words in _CONCLUSION_WORDS),
    *(f"q_{kind}*c_{words}" for kind, words in _ANSWERS),
    "negated_terms", "free_terms", "negated_share", "first_sentence_negates", "null_phrase",
)


def conclusion_text(abstract: str) -> str:
    """The conclusion sentences of an abstract: its conclusion section, else its last two sentences."""
    sentences = split_sentences(abstract)
    chosen = [s.text for s in sentences if s.is_conclusion] or [s.text for s in sentences[-2:]]
    return " ".join(chosen)


def features(question: str, abstract: str) -> np.ndarray:
    """The cue vector (:data:`FEATURES`, in order) of an abstract for a question."""
    conclusion = conclusion_text(abstract)
    asked = terms(question)
    best = max((s.text for s in split_sentences(conclusion)), key=lambda text: len(asked & terms(text)), default="")
    counts = [float(len(pattern.findall(text))) for text in (conclusion, best) for pattern in _PATTERNS.values()]
    overlap = len(asked & terms(conclusion)) / max(1, len(asked))
    q_negation = float(bool(_PATTERNS["negation"].search(question)))
    q_comparative = float(bool(_COMPARATIVE.search(question)))
    kinds = {name: float(bool(pattern.search(question))) for name, pattern in _KINDS.items()}
    wording = {name: float(len(pattern.findall(conclusion))) for name, pattern in _WORDING.items()}
    answers = [kinds[kind] * wording[words] for kind, words in _ANSWERS]
    raw = np.array([*counts, q_negation, q_comparative, overlap, np.log1p(len(conclusion.split())),
                    *kinds.values(), *wording.values(), *answers, *_negation_scope(asked, conclusion)])
    return np.log1p(raw)  # counts with diminishing returns: the fifth "not" says less than the first


def _negation_scope(asked: frozenset[str], conclusion: str) -> list[float]:
    negated = free = 0
    first_negates = 0.0
    for index, sentence in enumerate(split_sentences(conclusion)):
        words = [w.lower() for w in _WORD.findall(sentence.text)]
        negators = [i for i, w in enumerate(words) if _NEGATOR.match(w) or w.endswith("n't")]
        if index == 0 and negators:
            first_negates = 1.0
        for i, word in enumerate(words):
            if terms(word) & asked:
                if any(0 < i - j <= _SCOPE for j in negators):
                    negated += 1
                else:
                    free += 1
    return [float(negated), float(free), negated / (negated + free + 1), first_negates,
            float(bool(_NULL_PHRASES.search(conclusion)))]
