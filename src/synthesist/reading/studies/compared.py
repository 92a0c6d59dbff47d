"""What one clause of a finding compares: is a factor's word where a compared factor stands, or only a measure, a
time, the population or a group of people? Code only, read from the clause's words around the factor.

- :func:`compared`: the factor (an exposure) groups people or acts on something — "patients *undergoing* surgery",
  "*with or without* surgery", "statin *use*", "metformin *reduced* mortality", "sex *was not a predictor*", "age
  (*HR* 1.4)", "no gender *difference in* survival" — not "survival: 68 vs 56 %", "1 yr after surgery", "at
  follow-up", "levels of blood pressure", "body weight *decreased in* the exercise group" (a measure that changed),
  "*In patients undergoing surgery,* dexamethasone …" (the population).
- :func:`only_a_group`: every mention of a word names a group of people, not what was measured in them ("higher in
  *male patients* than in *female patients*"; but "the number of patients with delirium" counts delirium).
- :func:`listed_together`: two factors of one list ("age, diabetes and hypertension were predictors of …"), which
  says nothing of one on the other.

The conflict detector (:mod:`synthesist.appraisal.conflicts`) reads findings with these; tests hold the sentences each
rule was written for, and the common ways trials and cohorts state a comparison.
"""

from __future__ import annotations

import re

from .. import lexicon
from ..text import terms

__all__ = ["compared", "listed_together", "only_a_group", "tokens_of"]

_TOKENS = re.compile(r"[^\W\d_][\w'/-]*|\d[\d.,]*|[^\w\s]")
WINDOW, AFTER_WINDOW = 3, 2
"""Words (other than fillers, adverbs and list members) looked at before a factor for a word that groups people by
it, and after it (its head noun, "statin *therapy* reduced", then the verb)."""
_FILLER = frozenset("a an the is was were are be been being not no also both either neither statistically "
                    "significantly significant independently independent strongly only any this these "
                    "there".split())
_PEOPLE = frozenset("patients patient group groups arm arms cohort users subjects participants individuals controls "
                    "counterparts children women men mothers infants those".split())
_PREPOSITIONS = frozenset("in of between than at for from to among on during after before within by over into "
                          "across throughout".split())
_BEFORE = lexicon.words("compared", "BEFORE")
"""Words before a factor that make it compared: how people came to have it, what it is set against, or what it does
("*effect of* exposure", "*between* men and women"; ``reading/lexicons/compared.toml``)."""
_AFTER = lexicon.words("compared", "AFTER")
"""Words after a factor that make it compared: its group or its use, an association, a prediction, a judgement of
it ("aspirin was *superior* to placebo"), the auxiliary of what it did ("aspirin *does* not reduce", "*failed* to
reduce", "*resulted* in", "*had* lower mortality"), or an effect measure (``reading/lexicons/compared.toml``)."""


def _forms(verb: str) -> tuple[str, ...]:
    """A verb's base, third-person and past forms: reduce → reduces, reduced; modify → modifies, modified; prevent →
    prevents, prevented (cut's past is its base)."""
    if verb.endswith("e"):
        return verb, verb + "s", verb + "d"
    if verb.endswith("y"):
        return verb, verb[:-1] + "ies", verb[:-1] + "ied"
    return verb, verb + "s", verb + "ed"


_EFFECT_FORMS = frozenset(form for verb in lexicon.word_list("compared", "EFFECT_VERBS") for form in _forms(verb))
"""Verbs of an effect in every form (``reading/lexicons/compared.toml``)."""
_NOT_VERBS = frozenset("based aged bed need seed speed red hundred".split())
_RATIOS = frozenset({"HR", "OR", "RR", "aOR", "aHR", "IRR", "RRR", "ARR"})
_GROUPED_WORD = re.compile(r"-(?:treated|exposed|using|users?|fed|supplemented)$", re.IGNORECASE)
_COVARIATE_WORD = re.compile(r"-(?:adjusted|matched|standardi[sz]ed|specific|stratified)$", re.IGNORECASE)
_DOSE_UNITS = frozenset("mg g µg mcg ug iu ml mg/kg mg/d mg/day mmol units unit daily weekly once twice times "
                        "per day".split())
_MEASURED = frozenset("number numbers proportion proportions percentage rate rates incidence frequency prevalence "
                      "share count".split())
_LISTING = frozenset({",", "and", "or"})
_RELATIVE = frozenset("who whom whose which that".split())
_SEEN = frozenset("observed found seen noted detected shown evident apparent".split())
_VERBS_OF_A_LIST = frozenset("was were is are had has have".split())


def tokens_of(text: str) -> list[str]:
    """Words (with their hyphens and slashes), numbers and single punctuation marks, in order."""
    return _TOKENS.findall(text)


def _hits(tokens: list[str], words: frozenset[str]) -> list[int]:
    return [i for i, token in enumerate(tokens)
            if token[0].isalpha() and terms(token) & words and not _COVARIATE_WORD.search(token)]


def compared(clause: str, factor: frozenset[str]) -> bool:
    """The factor is what the clause compares (module docstring): a span of its words with, before it (at most
    :data:`WINDOW` other words, stopping at punctuation but a comma), a word that groups people by it; or, after it
    (at most :data:`AFTER_WINDOW` other words; list members, fillers, adverbs, parentheses, brackets and a dose pass;
    other punctuation, a bare number or a preposition stops the look), a group's or a use's word, an association, a
    judgement, an auxiliary, a ratio, "*difference (was observed) in*", or an effect verb with an object when the
    span can be its subject ("metformin *reduced mortality*"; "body weight *decreased in* …" has none: the measure
    itself changed; in "survival *after* surgery improved" surgery is not what improved). A span inside a clause's
    leading "In/Among … ," phrase names the population, not the factor compared."""
    tokens = tokens_of(clause)
    lead = tokens.index(",") if tokens and tokens[0].lower() in ("in", "among", "for") and "," in tokens else -1
    spans: list[tuple[int, int]] = []
    for i in _hits(tokens, factor):
        if spans and i - spans[-1][1] <= 2:
            spans[-1] = (spans[-1][0], i)
        else:
            spans.append((i, i))
    return any(end > lead and (_grouped_before(tokens, start) or _grouped_after(tokens, end, _subject(tokens, start))
                               or _GROUPED_WORD.search(tokens[end]))
               for start, end in spans)


def _subject(tokens: list[str], start: int) -> bool:
    """The span can be what acts: no preposition stands right before it ("*at* follow up impaired anorectal
    function", "survival *after* surgery improved": the verb is not the factor's)."""
    before = next((t.lower() for t in reversed(tokens[:start]) if t.lower() not in _FILLER), "")
    return before not in _PREPOSITIONS


def _grouped_before(tokens: list[str], start: int) -> bool:
    seen = 0
    for token in reversed(tokens[:start]):
        word = token.lower()
        if word in _BEFORE:
            return True
        if word in _LISTING or word in _FILLER:
            continue
        seen += 1
        if not token[0].isalpha() or seen == WINDOW:
            return False
    return False


def _grouped_after(tokens: list[str], end: int, subject: bool) -> bool:
    following = tokens[end + 1:]
    seen = depth = 0
    listed = False
    for i, token in enumerate(following):
        word = token.lower()
        if token in _RATIOS or depth and word in ("hazard", "odds", "ratio", "relative"):
            return True  # "age (HR 1.4, p = 0.01)", "male gender (OR 1.3)", "age (odds ratio 1.058, …)"
        if token in "([" or token in ")]":  # passed over: "aspirin (75 mg daily) reduced", "aspirin [75 mg]"
            depth = max(0, depth + (1 if token in "([" else -1))
            continue
        if depth or word in _FILLER or word in _DOSE_UNITS or (word.endswith("ly") and len(word) > 4):
            continue
        if word in _LISTING:  # "age, diabetes and hypertension were predictors": list members are passed
            listed = True
            continue
        if token[0].isdigit() and i + 1 < len(following) and following[i + 1].lower() in _DOSE_UNITS:
            continue  # "atorvastatin 80 mg reduced"
        if word in _AFTER:
            return True
        if word in ("difference", "differences"):  # "no sex difference was observed in mortality"
            rest = (w.lower() for w in following[i + 1:] if w.lower() not in _FILLER and w.lower() not in _SEEN)
            return next(rest, "") in ("in", "between")
        if word == "with" and any(w.lower() in ("ratio", "ratios") or w in _RATIOS for w in following[i + 1:i + 4]):
            return True  # "male gender with a hazard ratio (HR) = 1.32"
        if _effect_verb(word):
            return subject and _has_object(following[i + 1:])
        if not token[0].isalpha() or word in _PREPOSITIONS or word in _RELATIVE:
            return False  # "those women *who* received AC": what follows is the relative clause's, not theirs
        if listed:
            listed = False
            continue
        seen += 1
        if seen == AFTER_WINDOW:
            return False
    return False


def _effect_verb(word: str) -> bool:
    """A verb of effect: a listed one in any form, or another past tense ("conferred", "doubled", "alleviated")."""
    return word in _EFFECT_FORMS or (word.endswith("ed") and len(word) > 4 and word not in _NOT_VERBS)


def _has_object(rest: list[str]) -> bool:
    """The verb acts on something: the next word (past fillers, adverbs and parentheses) is neither a preposition,
    nor a number or punctuation, nor the end ("metformin reduced *mortality*", "showed no *effect*"; not "weight
    decreased *in* …", "surgery lasted *3* hours")."""
    depth = 0
    for token in rest:
        word = token.lower()
        if token in "([" or token in ")]":
            depth = max(0, depth + (1 if token in "([" else -1))
            continue
        if depth or word in _FILLER or (word.endswith("ly") and len(word) > 4):
            continue
        return token[0].isalpha() and word not in _PREPOSITIONS
    return False


def only_a_group(clause: str, words: frozenset[str]) -> bool:
    """Every mention of ``words`` in the clause names a group of people, not what was measured in them: "the Hcy
    level was higher in *male patients* than in *female patients*" measures homocysteine, not "female"; "mortality
    was higher in *patients with pneumonia*" measures mortality, and "scores were lower for *women with a
    postoperative complication*" measures the scores. "The number of patients with delirium" measures delirium."""
    tokens = tokens_of(clause)
    hits = _hits(tokens, words)
    return bool(hits) and all(_names_group(tokens, i) for i in hits)


def _names_group(tokens: list[str], i: int) -> bool:
    after = next((t.lower() for t in tokens[i + 1:] if t.lower() not in _FILLER), "")
    if after in _PEOPLE:
        return True
    before = [t.lower() for t in tokens[max(0, i - 6):i] if t.lower() not in _FILLER]
    if before and before[-1] in ("versus", "vs", "than", "among"):
        return True
    if before[-2:] in (["compared", "with"], ["compared", "to"]):  # "in obese patients compared with controls"
        return True
    for k in (1, 2):  # "patients with pneumonia"; one word between: "women with a postoperative complication"
        if len(before) > k and before[-k] in ("with", "without") and before[-k - 1] in _PEOPLE:
            return not (len(before) >= k + 3 and before[-k - 2] == "of" and before[-k - 3] in _MEASURED)
    return False


def listed_together(text: str, first: frozenset[str], second: frozenset[str]) -> bool:
    """``text`` names the two as members of one list ("Axis I diagnosis, education, and symptom severity"): the
    words between a mention of each hold a comma, "and" or "or" and no verb ("exercise *reduced* depression, a risk
    factor for suicide" is a finding, not a list)."""
    tokens = tokens_of(text)
    for i in _hits(tokens, first):
        for j in _hits(tokens, second):
            between = tokens[min(i, j) + 1:max(i, j)]
            if (between and any(t.lower() in _LISTING for t in between)
                    and not any(t.lower() in _VERBS_OF_A_LIST or _effect_verb(t.lower()) for t in between)):
                return True
    return False
