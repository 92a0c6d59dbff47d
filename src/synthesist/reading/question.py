"""What a research question is about: its keywords, interventions, conditions and targets.

Question words, stop words and the generic verbs of a question ("does … reduce …", "what is the role of …") are
dropped; the remaining words keep their order, so multiword terms stay whole ("type 2 diabetes", "breast cancer")
and numbers stay attached to the word they qualify ("type 2", "stage 3", "COVID-19").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import lexicon
from .entities import interventions_in, is_condition_word, is_drug_like, is_procedure, targets_in
from .text import words

DROPPED = lexicon.words("question", "DROPPED")
"""Words a search query does without: function words, question words, and the verbs a question is phrased with
(``reading/lexicons/question.toml``)."""

QUALIFIERS = frozenset("type stage grade phase class tier level".split())
_NUMBER = re.compile(r"^(?:\d+|[IVX]{1,4})$")


@dataclass(frozen=True)
class QuestionTerms:
    """The searchable content of a question."""

    question: str
    keywords: tuple[str, ...]
    """Kept words in question order, each once (original case)."""
    phrases: tuple[str, ...]
    """Runs of consecutive kept words: the question's multiword terms ("type 2 diabetes", "HMO women")."""
    interventions: tuple[str, ...]
    conditions: tuple[str, ...]
    targets: tuple[str, ...]

    def core_query(self, max_words: int = 8) -> str:
        """The keyword query: every kept word in order, at most ``max_words`` (entities are never cut)."""
        entity_words = {
            w.lower() for phrase in (*self.interventions, *self.conditions, *self.targets) for w in phrase.split()
        }
        kept = list(self.keywords)
        while len(kept) > max_words:
            droppable = [w for w in kept if w.lower() not in entity_words]
            if not droppable:
                break
            kept.remove(droppable[-1])
        return " ".join(kept)

    def short_query(self) -> str:
        """ "intervention condition" — what a trial registry matches best; the first keywords when either is
        missing."""
        parts = [*self.interventions[:1], *self.conditions[:1]]
        for phrase in self.phrases:
            if len(parts) >= 2:
                break
            if not any(phrase.lower() in part.lower() or part.lower() in phrase.lower() for part in parts):
                parts.append(phrase)
        return " ".join(parts) or " ".join(self.keywords[:3])


def question_terms(question: str) -> QuestionTerms:
    """Split ``question`` into its searchable parts."""
    tokens = [w.strip(".'") for w in words(question)]
    kept = _kept_flags(tokens)
    runs: list[list[str]] = []
    previous = False
    for token, keep in zip(tokens, kept, strict=True):
        if keep:
            if not previous:
                runs.append([])
            runs[-1].append(token)
        previous = keep
    keywords = tuple(dict.fromkeys(t for run in runs for t in run))
    phrases = tuple(dict.fromkeys(" ".join(run) for run in runs))
    interventions = _interventions(question, runs)
    return QuestionTerms(
        question=question,
        keywords=keywords,
        phrases=phrases,
        interventions=interventions,
        conditions=tuple(dict.fromkeys(c for run in runs for c in _conditions(run))),
        targets=tuple(targets_in(question, exclude=interventions)),
    )


def _kept_flags(tokens: list[str]) -> list[bool]:
    content = [bool(t) and t.lower() not in DROPPED and not _NUMBER.match(t) for t in tokens]
    kept = list(content)
    for i, token in enumerate(tokens):
        following = tokens[i + 1] if i + 1 < len(tokens) else ""
        if token.lower() in QUALIFIERS:
            kept[i] = bool(_NUMBER.match(following))
        elif _NUMBER.match(token):
            before = tokens[i - 1].lower() if i else ""
            kept[i] = before in QUALIFIERS or (i > 0 and content[i - 1] and not token.isdigit())
    return kept


def _interventions(question: str, runs: list[list[str]]) -> tuple[str, ...]:
    """Drug-like names, and procedures with up to two words before them ("limb-salvage surgery")."""
    found = {name: question.lower().find(name) for name in interventions_in(question)}
    for run in runs:
        for i, word in enumerate(run):
            if not is_procedure(word):
                continue
            start = i
            while (
                start > 0 and i - start < 2 and not (is_condition_word(run[start - 1]) or is_drug_like(run[start - 1]))
            ):
                start -= 1
            phrase = " ".join(run[start : i + 1])
            found = {k: v for k, v in found.items() if k not in phrase.lower()}
            found[phrase] = question.find(phrase)
    return tuple(sorted(found, key=found.__getitem__))


def _conditions(run: list[str]) -> list[str]:
    """The conditions in a run of kept words: each disease word with up to four words before it, never reaching
    back past a drug or target name or the previous condition."""
    found = []
    floor = 0
    for end, word in enumerate(run):
        if not is_condition_word(word) or (end + 1 < len(run) and is_condition_word(run[end + 1])):
            continue
        start = end
        while start > floor and end - start < 4 and not (is_drug_like(run[start - 1]) or targets_in(run[start - 1])):
            start -= 1
        found.append(" ".join(run[start : end + 1]))
        floor = end + 1
    return found


_YES_NO = lexicon.pattern("question", "YES_NO")
VERSUS = lexicon.pattern("question", "VERSUS")
"""The words that set one treatment against another in a question typed as a search ("vs", "versus", "compared
with": ``lexicons/question.toml``)."""
TYPED_COMPARATIVE = lexicon.pattern("question", "TYPED_COMPARATIVE")
TYPED_TOPIC = lexicon.pattern("question", "TYPED_TOPIC")
"""What makes a phrase with "vs" a topic, not a comparison asked about (prevalence, causes, a test's accuracy, a
study's design: ``lexicons/question.toml``)."""
_OPEN = re.compile(r"^(?:what|which|how|why|when|where|who|whom|whose)\b", re.I)


def opens_yes_no(question: str) -> bool:
    """Whether ``question`` itself opens with an auxiliary verb ("Does X change Y?"), not a title's topic before it."""
    return bool(_YES_NO.match(question.strip(" \"'")))


def is_yes_no(question: str) -> bool:
    """Whether ``question`` asks yes or no: one of its parts (split at colons, full stops and dashes) opens with an
    auxiliary verb, or it is a comparison typed as a search (:func:`typed_comparison`), or it is a question none of
    whose parts opens with a wh-word ("Aripiprazole: a new risk factor for pathological gambling?"). A bare topic
    ("metformin and cancer incidence") is not."""
    parts = [part.strip(" \"'") for part in re.split(r"[:.?]|--", question) if part.strip(" \"'")]
    return any(_YES_NO.match(part) for part in parts) or typed_comparison(question) or (
        "?" in question and not any(_OPEN.match(part) for part in parts))


def typed_comparison(question: str) -> bool:
    """Whether ``question`` is a comparison typed as a search: it sets one treatment against another (:data:`VERSUS`:
    "vs", "versus", "compared with") or, a question, its part after the last dash or colon opens with a comparative
    (:data:`TYPED_COMPARATIVE`: "sterile water injections for low back pain - better pain relief than saline?"; a
    title with no question mark, "Preoperative anaemia: less is more", is not), no part of it (split at colons,
    dashes, commas, full stops and question marks) opens with an auxiliary or a question word, and it names no
    aspect of a topic or design of a study (:data:`TYPED_TOPIC`: "Prevalence of obesity in rural vs urban children",
    "… versus open appendectomy: a randomised trial"). "tofacitinib ACR20 response vs placebo in rheumatoid
    arthritis" asks whether the two differ; "Compared with placebo, does metformin lower HbA1c?" is a question of
    its own kind."""
    parts = [part.strip(" \"'") for part in re.split(r":\s+|\s+-{1,2}\s*|,\s+|\?|\.\s+(?![a-z])", question)]
    parts = [part for part in parts if part]
    asking = re.split(r":\s+|\s+-{1,2}\s*", question.strip())  # after the last colon or dash
    compared = VERSUS.search(question) is not None or (
        len(asking) > 1 and question.rstrip().endswith("?") and TYPED_COMPARATIVE.match(asking[-1]) is not None)
    return (compared and TYPED_TOPIC.search(question) is None
            and not any(_YES_NO.match(part) or _OPEN.match(part) for part in parts))
