"""The reading core's learned models: small linear models trained on clinicians' labels, their vectorisers and
their shipped weights (JSON package data), below the agents that compute their features and act on them.

- :mod:`.linear`: a TF-IDF vectoriser, a softmax classifier and a listwise scorer, loaded and scored with numpy;
- :mod:`.fitting`: fitting them (scipy's L-BFGS), for training code only;
- :mod:`.study_reader`: the study reader's passage ranker, direction model and address model
  (``study_reader.json``);
- :mod:`.abbreviations`: the abbreviations a text defines (the Schwartz–Hearst detector), for every reader that needs them.

Imports only leaves (errors) and numpy (scipy when fitting): agents use it, it uses no agent.
"""

from .study_reader import StudyReader, study_reader

__all__ = ["StudyReader", "study_reader"]
