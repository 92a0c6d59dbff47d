"""The rule reader of one outcome's direction, intervention versus comparator: the learned reader's features
(:mod:`.learned`), never a reading of its own.

:func:`scored_units` scores each sentence or table row for how well it reports ``outcome`` for the two arms;
:func:`read_direction` narrows a unit to the clause that names the outcome and reads it (non-significance, then a
change word turned round when the comparator is the subject, then figures per arm, a ratio's side of its null,
signs). The steps: docs/architecture/studies.md, "The rule reader". The quote is always one whole unit of the
article, verbatim, with its section."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from ...models import Evidence
from ...study import Direction, DirectionQuery, Effect, MeasureName, OutcomeResult
from .. import lexicon
from ..study_reader import word_rarity
from ..synonyms import other_names
from ..text import reading_clauses, terms
from ..vocabulary import is_future_work
from .arms import THAN, ArmTerms, flip, outcome_aliases
from .effects import Significance, clause_effect, outcome_side, read_effect, row_p, significance
from .passages import SECTION_WEIGHT, Unit, units

_I = re.IGNORECASE
_NO_DIFFERENCE = lexicon.pattern("direction", "NO_DIFFERENCE")
"""A non-significance statement: "did not differ", "no significant", "similar" (``reading/lexicons/direction.toml``)."""
_UP = lexicon.pattern("direction", "UP")
_DOWN = lexicon.pattern("direction", "DOWN")
_TREND = lexicon.pattern("direction", "TREND")
_STATISTIC = re.compile(r"\b[pP]\s*[<=>≤≥]|\b95\s?%|\bCI\b|\bsignifican", _I)
_REPORTED = re.compile(r"\b[pP]\s*[<=>≤≥]|\b95\s?%|\bCI\b")
_P_VALUE = re.compile(r"\b[pP]\s*[<=>≤≥]")
"""A statistic as printed (an aim's "would significantly reduce" is none)."""
_FOLLOW_UP = lexicon.pattern("direction", "FOLLOW_UP")
_CLAUSE = lexicon.pattern("direction", "CLAUSE")
_BETWEEN = lexicon.pattern("direction", "BETWEEN")
"""A comparison named as a pair ("no difference between the GCV group and the ACV group")."""
_CONCESSIVE = re.compile(r"^\s*(?:although|though|whilst|while|despite)\b", _I)
"""A clause that concedes ("…, although pain scores were greater") is not the finding the sentence reports."""
_UP_COMPARATIVE = lexicon.pattern("direction", "UP_COMPARATIVE")
"""A comparative of increase, read before :data:`_UP` (``lexicons/direction.toml``)."""
_DOWN_COMPARATIVE = lexicon.pattern("direction", "DOWN_COMPARATIVE")
"""A comparative of decrease, read before :data:`_DOWN` (``lexicons/direction.toml``)."""
_CHANGE_NOUN = lexicon.pattern("direction", "CHANGE_NOUN")
_AMOUNT = lexicon.pattern("direction", "AMOUNT_COMPARATIVE")
"""A comparative of amount, which after a change verb multiplies with it (``lexicons/direction.toml``)."""
_SMALLER = ("less", "smaller")
VERB_REACH = 40
"""How far before a comparative of amount (characters, no comma or semicolon between) its change verb may stand:
"reduced body weight significantly more"."""
_UP_NOUNS = ("increase", "gain", "rise", "improvement")
_VALUE = re.compile(r"(?<![\w.±])(?<!± )(?<!SD )(?<!SD: )(\d+(?:\.\d+)?)(?![\d.]*\s*[-–]\s*\d)")
_SIGNED = re.compile(r"(?<![\w.])([-−+])\s?\d+(?:\.\d+)?\s?%?")
_MEASURED = lexicon.words("direction", "MEASURED")
"""Words that say an outcome is measured, not what (``lexicons/direction.toml``)."""
_CITING = re.compile(r"\bet al\b|\bprevious(?:ly)? (?:studies|study|reported|demonstrated)|\bother studies\b", _I)
_AIM = lexicon.pattern("direction", "AIM")
"""What a study set out to do ("We evaluated the effects of X on Y") names the outcome and the arms but finds
nothing."""
_QUERY_SHORT_FORM = re.compile(r"(?:^|\()\s*([A-Z][A-Z0-9-]{1,8})\s*(?=\(|\)|$)")
"""An outcome the query names twice, short and long ("EAR (early response)", "early response (EAR)")."""
_GRADES = terms(" ".join(lexicon.word_list("direction", "GRADES")), folded=True)
"""Grades of one outcome: a unit that names other grades than the one asked reports another outcome
(``lexicons/direction.toml``)."""
_TIME_POINT = lexicon.pattern("direction", "TIME_POINT")
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                 "ten": 10, "twelve": 12}
_DAYS = {"h": 1 / 24, "d": 1, "w": 7, "m": 30.4, "y": 365.25}
PAIR_WEIGHT = 0.5
"""A unit that names the query's two arms as the pair it compares ("between A and B") is about this comparison."""
MIN_OUTCOME_OVERLAP = 0.34
"""The share of the outcome's words a unit must name to be read at all (a third: "Gag response rate" needs one
of three words beyond the generic ones), unless it names :data:`MIN_OUTCOME_WEIGHT` of their weight
(:func:`names_outcome`)."""
MIN_OUTCOME_WEIGHT = 0.45
"""The share of the outcome's weight (each word's rarity in the study reader's training articles) that names it
whatever the count of words: "transfusion" of "need for red-cell transfusion" (0.49), which a user's question words
as Evidence Inference's prompts seldom do. The end-to-end cross-validation over the train trials (2026-11-30):
0.783 / 0.759, the verdict 0.855, against 0.784 / 0.761 and 0.855 with the count alone; the weight alone at 0.34,
0.780 / 0.758 and 0.850. On the conflict topic sets, 8 more table rows right, 3 fewer wrong and 4 more for records
that report no finding on the question ("neonatal hypoglycaemia" names "neonatal respiratory morbidity" by its
rarest word)."""


@dataclass(frozen=True)
class Scored:
    score: float
    unit: Unit


def with_figures(answers: list[OutcomeResult]) -> OutcomeResult:
    """The first answer, or the first of the same direction that states its figures (a CI or a p value) when it
    states none: a conclusion in words ("vitamin D did not reduce fractures") and its results sentence ("HR 1.07,
    95% CI 0.91 to 1.26") are one finding, and the table shows its numbers."""
    first = answers[0]
    if _figures(first):
        return first
    return next((a for a in answers[1:] if a.direction == first.direction and _figures(a)), first)


def _figures(result: OutcomeResult) -> bool:
    return bool(result.effect and (result.effect.p or result.effect.ci_low))


def scored_units(evidence: Evidence, query: DirectionQuery, arms: ArmTerms | None = None,
                 aliases: dict[str, str] | None = None) -> tuple[list[Unit], list[Scored | None]]:
    """Every unit of ``evidence`` in reading order, with its rule score for the query (None for a unit that does
    not name the outcome, or cannot report a result: an aim, the methods, a call for more studies)."""
    outcome = query_outcome(query)
    arms = arms or ArmTerms.of(query)
    read = list(units(evidence))
    if not outcome:
        return read, [None] * len(read)
    short_forms = dict(outcome_aliases(outcome, aliases or {}))
    names = {name: words for name, words in other_names(outcome).items() if len(name) > 1}
    for name, words in other_names(outcome).items():  # "death" names "all-cause mortality", "A1C" names HbA1c
        if len(name) == 1:
            short_forms.setdefault(next(iter(name)), words)
    for short in _QUERY_SHORT_FORM.findall(query.outcome):  # "EAR (early response)": the query defines "EAR"
        short_forms.setdefault(short.lower(), outcome)
    named = [word for word in re.findall(r"[A-Za-z][\w-]*", query.outcome) if terms(word, folded=True)]
    for words in (named, [w for w in named if w.lower() not in _MEASURED]):
        initials = "".join(word[0] for word in words).lower()
        if len(initials) >= 2:  # "BUN" names "blood urea nitrogen (levels)" where the article never defines it
            short_forms.setdefault(initials, outcome)
    weights = _rarity(read, outcome)
    times = _time_points(query.outcome)
    gate = outcome_weights(outcome)
    return read, [_score(unit, outcome, arms, short_forms, weights, gate, times, names) for unit in read]


def outcome_weights(outcome: frozenset[str]) -> dict[str, float]:
    """How much each of the outcome's words counts toward naming it: its rarity in the study reader's training
    articles (:meth:`~synthesist.reading.study_reader.StudyReader.rarity`: "transfusion" tells more than "need" or
    "red", "nausea" more than "number of patients"), a hyphenated word whose parts are its words not at all (a unit
    that holds "red-cell" holds "red" and "cell"; "red cells" names it as well)."""
    parts = {word for word in outcome if "-" in word and set(word.split("-")) <= outcome}
    return {word: word_rarity(word) for word in sorted(outcome - parts)}


def names_outcome(weights: dict[str, float], words: frozenset[str]) -> bool:
    """Whether ``words`` name the outcome whose :func:`outcome_weights` these are: :data:`MIN_OUTCOME_OVERLAP` of
    its words, or :data:`MIN_OUTCOME_WEIGHT` of their weight."""
    if not weights:
        return False
    named = weights.keys() & words
    total = math.fsum(weights.values())  # 0 only for words every training article holds: the count alone decides
    return (len(named) / len(weights) >= MIN_OUTCOME_OVERLAP
            or bool(total) and math.fsum(weights[word] for word in sorted(named)) / total >= MIN_OUTCOME_WEIGHT)


def query_outcome(query: DirectionQuery) -> frozenset[str]:
    """The outcome's content words, its time point left out (the time is matched apart)."""
    return terms(_TIME_POINT.sub(" ", query.outcome), folded=True) or terms(query.outcome, folded=True)


def _rarity(read: list[Unit], outcome: frozenset[str]) -> dict[str, float]:
    """How much each outcome word tells units apart in this article: ``log(1 + N / df)`` (a word every sentence
    has, such as the condition's name, counts less than "severe" or "52 weeks")."""
    frequency = {word: 0 for word in outcome}
    for unit in read:
        for word in outcome & terms(unit.text, folded=True):
            frequency[word] += 1
    return {word: math.log(1 + len(read) / (1 + count)) for word, count in frequency.items()}


def _score(unit: Unit, outcome: frozenset[str], arms: ArmTerms, short_forms: dict[str, frozenset[str]],
           weights: dict[str, float], gate: dict[str, float], asked_times: frozenset[float] = frozenset(),
           names: dict[frozenset[str], frozenset[str]] | None = None) -> Scored | None:
    words = terms(f"{unit.context} {unit.text}", folded=True) if unit.kind == "table" else terms(unit.text, folded=True)
    for short in short_forms.keys() & words:  # "PTT" names "partial thromboplastin time"
        words = words | short_forms[short]
    for name, held in (names or {}).items():  # "side effects" names "adverse events"
        if name <= words:
            words = words | held
    if not names_outcome(gate, words):
        return None
    share = math.fsum(weights[word] for word in outcome & words) / (math.fsum(weights.values()) or 1.0)
    if unit.role in ("introduction", "methods") or len(unit.text) > 1200:
        return None
    if _AIM.match(unit.text) and not _REPORTED.search(unit.text):
        return None
    if is_future_work(unit.text) and not _STATISTIC.search(unit.text):
        return None  # "More studies are needed to improve the long-term walking adherence …" reports nothing
    score = 3.0 * share + SECTION_WEIGHT.get(unit.role, 0.5)
    score += 0.4 * bool(arms.intervention & words) + 0.4 * bool(arms.comparator & words)
    score += PAIR_WEIGHT * _pairs(unit.text, arms)
    score += 0.8 * bool(_STATISTIC.search(unit.text)) + 0.5 * bool(_NO_DIFFERENCE.search(unit.text))
    score += 0.5 * bool(_UP.search(unit.text) or _DOWN.search(unit.text))
    score -= 0.4 * (unit.kind == "table") + 1.5 * (unit.kind == "figure")
    score -= 0.8 * bool(_CITING.search(unit.text))  # another study's finding, cited in the discussion
    asked = outcome & _GRADES
    if asked and words & _GRADES and not asked & words:  # "mild and moderate POCD" when "severe POCD" is asked
        score -= 1.5
    if asked_times and (named := _time_points(unit.text)) and not _same_time(asked_times, named):
        score -= 1.5  # "at one week" when the outcome is asked "at 12 weeks"
    return Scored(score, unit)


@lru_cache(maxsize=50_000)
def _time_points(text: str) -> frozenset[float]:
    """The follow-up times ``text`` names, in days: "at 12 weeks", "12-week", "week 12" → 84 (not an age, "aged
    65 years", nor the decimals of "0.5 h")."""
    found = set()
    for match in _TIME_POINT.finditer(text):
        number, unit = (match.group("n"), match.group("unit")) if match.group("n") else (match.group("n2"),
                                                                                          match.group("unit2"))
        count = _NUMBER_WORDS.get(number.lower()) or int(number)
        found.add(round(count * _DAYS[unit.lower()[0]], 1))
    return frozenset(found)


def _same_time(asked: frozenset[float], named: frozenset[float]) -> bool:
    """Whether a named time is one asked, within 10 % ("3 months" is "12 weeks", "12 months" is "1 year")."""
    return any(abs(a - n) <= 0.1 * max(a, n) for a in asked for n in named)


def read_direction(text: str, query: DirectionQuery, *, hint: MeasureName | None = None,
                   arms: ArmTerms | None = None, guess: bool = True) -> tuple[Direction, str]:
    """The direction ``text`` states for the query's outcome, and the clause it was read from. A significant
    difference with nothing that says which way (no change word, no ratio, no figures per arm) reads as an increase,
    the commoner case in the dev labels; ``guess=False`` reads it as ``not_reported`` (a conflict never rests on a
    guess)."""
    arms = arms or ArmTerms.of(query)
    clause, effect, sig = _clause_significance(text, terms(query.outcome, folded=True), arms, hint)
    if _NO_DIFFERENCE.search(clause) and not _significant_change(clause) or sig == "not_significant":
        return "no_difference", clause
    if _TREND.search(clause) and sig != "significant":
        return "no_difference", clause
    change = _change(clause, arms, terms(query.outcome, folded=True))
    if change is not None:
        return change, clause
    named = terms(query.outcome, folded=True) & terms(clause, folded=True)
    per_arm = _by_arms(clause, arms) if sig == "significant" and named else None
    if per_arm is not None:  # "85% in the UFT group and 76% in the surgery-alone group (HR for death 0.64)"
        return per_arm, clause
    side = outcome_side(effect, query.outcome)
    if side is not None and sig != "not_significant":
        return ("increased" if side == "above" else "decreased"), clause
    if sig == "significant":
        grounded = _by_numbers(clause, arms) or _by_arms(clause, arms) or _by_sign(clause)
        return grounded or ("increased" if guess else "not_reported"), clause
    return "no_difference", clause


SIGNALS = ("significant", "not_significant", "change_up", "change_down", "arms_up", "arms_down", "numbers_up",
           "numbers_down", "sign_up", "sign_down", "no_difference_words", "trend_words", "significant_change",
           "narrowed", "row_p_significant", "row_p_not_significant")
"""Each step of :func:`read_direction` on its own, whatever the steps before it decided, and one that is none of its
steps (a table row's last figure as its p value): the p value's or CI's
significance, the change word (turned round for the comparator), each arm's figure, the numbers either side of
"versus", the signs, the words of no difference and of a trend, a significant change beside them, whether the
unit was narrowed to one clause, and what its last figure says when read as a table row's p value
(:func:`~.effects.row_p`). As the learned direction model's inputs they let it weigh what the rules chain (a
per-arm figure against a change word that says "improvement"): in 5-fold cross-validation over the train split's
trials, end to end, 0.774 against 0.756 with the verdict alone (2026-11-30; studies.md)."""


def signals(text: str, query: DirectionQuery, *, hint: MeasureName | None = None,
            arms: ArmTerms | None = None) -> tuple[bool, ...]:
    """One value per :data:`SIGNALS` for ``text``."""
    arms = arms or ArmTerms.of(query)
    outcome = terms(query.outcome, folded=True)
    clause, _, sig = _clause_significance(text, outcome, arms, hint)
    change, per_arm = _change(clause, arms, outcome), _by_arms(clause, arms)
    numbers, sign = _by_numbers(clause, arms), _by_sign(clause)
    return (sig == "significant", sig == "not_significant", change == "increased", change == "decreased",
            per_arm == "increased", per_arm == "decreased", numbers == "increased", numbers == "decreased",
            sign == "increased", sign == "decreased", bool(_NO_DIFFERENCE.search(clause)),
            bool(_TREND.search(clause)), _significant_change(clause), clause != text,
            *(row_p(text) == value for value in ("significant", "not_significant")))


def _clause_significance(text: str, outcome: frozenset[str], arms: ArmTerms,
                         hint: MeasureName | None) -> tuple[str, Effect | None, Significance]:
    """The clause of ``text`` about the outcome, its effect estimate (the whole text's when it states none), and
    whether it reports a significant difference (from the clause's p value or CI, else from the whole text's)."""
    clause = _outcome_clause(text, outcome, arms)
    effect = read_effect(clause, measure_hint=hint) or read_effect(text, measure_hint=hint)
    sig = significance(clause, effect)
    if sig == "unknown" and clause != text:
        sig = significance(text, read_effect(text, measure_hint=hint))
    return clause, effect, sig


def _significant_change(clause: str) -> bool:
    """"significantly lower" beside a "no difference" about another measure: the change wins."""
    return bool(re.search(r"(?<!not )(?<!no )\b(?:significant(?:ly)?|statistically) (?:\w+ )?(?:higher|lower|greater|"
                          r"less|more|fewer|increas\w*|decreas\w*|reduc\w*|improv\w*)", clause, _I))


def _change(clause: str, arms: ArmTerms, outcome: frozenset[str] = frozenset()) -> Direction | None:
    """The direction the clause's change word gives, turned round when the comparator is the one that changed
    (comparatives first; "greater reductions" and "fell more" multiply; a comparative naming an arm is no change:
    studies.md)."""
    for up_pattern, down_pattern in ((_UP_COMPARATIVE, _DOWN_COMPARATIVE), (_UP, _DOWN)):
        found = sorted(((m, pattern is up_pattern) for pattern in (up_pattern, down_pattern)
                        for m in pattern.finditer(clause) if not _names_arm(clause, m, arms, outcome)),
                       key=lambda f: f[0].start())
        if found:
            first, up = found[0]
            direction: Direction = "increased" if up else "decreased"
            of_change = _CHANGE_NOUN.match(clause, first.end())
            if of_change and up_pattern is _UP_COMPARATIVE:
                direction = direction if of_change.group("noun").lower().startswith(_UP_NOUNS) else flip(direction)
            elif up_pattern is _UP_COMPARATIVE and (verb := _changed_by(clause, first, outcome)):
                direction = flip(verb) if first.group().lower() in _SMALLER else verb
            return flip(direction) if arms.comparator_is_subject(clause, first.start()) else direction
    return None


def _changed_by(clause: str, comparative: re.Match[str], outcome: frozenset[str]) -> Direction | None:
    """The direction of the change verb a comparative of amount says the size of ("Body weight *fell more* with
    glutide than with metformin": a decrease, not the "more" of an increase), or None where none stands just
    before it; a word of the outcome is none ("weight loss was greater": the loss is what was measured)."""
    if not _AMOUNT.fullmatch(comparative.group()):
        return None
    before = clause[max(0, comparative.start() - VERB_REACH):comparative.start()]
    before = re.split(r"[,;]", before)[-1]
    verbs = [(m, True) for m in _UP.finditer(before)] + [(m, False) for m in _DOWN.finditer(before)]
    verbs = [(m, up) for m, up in verbs if not (_UP_COMPARATIVE.fullmatch(m.group())
                                                 or _DOWN_COMPARATIVE.fullmatch(m.group())
                                                 or terms(m.group(), folded=True) & outcome)]
    if not verbs:
        return None
    _, up = max(verbs, key=lambda found: found[0].start())
    return "increased" if up else "decreased"


def _names_arm(clause: str, cue: re.Match[str], arms: ArmTerms, outcome: frozenset[str]) -> bool:
    """Whether a comparative names an arm ("at the higher PBDE-47 dose") or closes a threshold ("stage 2 *or higher*")
    rather than stating a change."""
    if not (_UP_COMPARATIVE.fullmatch(cue.group()) or _DOWN_COMPARATIVE.fullmatch(cue.group())):
        return False
    if re.search(r"\bor\s+$", clause[max(0, cue.start() - 4):cue.start()], _I):
        return True
    if re.match(r"\s+than\s+[\d.]", clause[cue.end():]):  # "performance status of less than 2"
        return True
    following = re.match(r"[\s-]*([^\s,;.()]+)", clause[cue.end():])
    return bool(following
                and terms(following.group(1), folded=True) & ((arms.intervention | arms.comparator) - outcome))


def _by_numbers(clause: str, arms: ArmTerms) -> Direction | None:
    """"26 units … as compared to 4 units in the tranexamic acid group": the number before "compared with" or
    "versus" against the one after, read for the arm named with the first."""
    cut = THAN.search(clause)
    if not cut:
        return None
    before = list(_VALUE.finditer(clause[:cut.start()]))
    after = _VALUE.search(clause, cut.end())
    if not before or not after:
        return None
    first, second = float(before[-1].group(1)), float(after.group(1))
    if first == second:
        return None
    direction: Direction = "increased" if first > second else "decreased"
    return flip(direction) if arms.first_is_comparator(clause, before[-1].start()) else direction


_PER_ARM = lexicon.pattern("direction", "PER_ARM")
"""A figure stated for one arm: "42.6% (262 of 615 patients) in the hydrocortisone group", "8.2 days in the early
group", "2 of 45 (4.4%) in the meperidine group" (the share in brackets); an arm named by the intervention's
absence ("the group without preparation", "the surgery-alone group") is the comparator."""


def _by_arms(clause: str, arms: ArmTerms) -> Direction | None:
    """A significant difference stated as one figure per arm ("mortality was 42.6% in the hydrocortisone group and
    48.9% in the placebo group (P = 0.03)"): the intervention's figure against the comparator's."""
    values: dict[str, float] = {}
    for match in _PER_ARM.finditer(clause):
        named = terms(match.group("arm"), folded=True)
        absent = bool(re.search(r"\b(?:without|no|not|non)\b", match.group("arm"), _I)  # "the group without it"
                      or re.search(r"\balone\b", match.group("arm"), _I) and not arms.intervention & named)
        side = ("comparator" if absent or arms.comparator & named and not arms.intervention & named else
                "intervention" if arms.intervention & named and not arms.comparator & named else None)
        if side is not None:
            values.setdefault(side, float(match.group("share") or match.group("value")))  # "45 (4.4%)": 4.4
    if len(values) < 2 or values["intervention"] == values["comparator"]:
        return None
    return "increased" if values["intervention"] > values["comparator"] else "decreased"


def _by_sign(clause: str) -> Direction | None:
    """Significant changes printed with signs only ("−4.3%, p = 0.023"): all negative → decreased."""
    signs = {match.group(1) for match in _SIGNED.finditer(clause)}
    if signs == {"-"} or signs == {"−"} or signs == {"-", "−"}:
        return "decreased"
    return "increased" if signs == {"+"} else None


def _outcome_clause(text: str, outcome: frozenset[str], arms: ArmTerms) -> str:
    """The clause of ``text`` about the outcome for these two arms (the whole text when it has one clause): the
    outcome's words count, and a clause naming both arms beats one naming neither."""
    pieces = [piece for piece in _clauses(text) if piece.strip()]
    if len(pieces) < 2:
        return text

    def weight(piece: str) -> float:
        words = terms(piece, folded=True)
        both = bool(arms.intervention & words) and bool(arms.comparator & words)
        return (len(outcome & words) + 0.75 * bool(arms.intervention & words) + 0.75 * bool(arms.comparator & words)
                + 0.75 * both + 1.5 * _pairs(piece, arms) - 1.0 * bool(_CONCESSIVE.match(piece))
                - 1.5 * _third_arm(piece, arms))

    index = max(range(len(pieces)), key=lambda i: weight(pieces[i]))
    if weight(pieces[index]) <= 0:
        return text
    clause = pieces[index]
    for follower in pieces[index + 1:]:  # "X fell, but the difference was not significant" reads as one
        if not _FOLLOW_UP.match(follower):
            break
        clause = f"{clause}, {follower}"
    return clause


def outcome_effect(text: str, outcome: frozenset[str], arms: ArmTerms, *,
                   measure_hint: MeasureName | None = None) -> Effect | None:
    """The estimate ``text`` prints for the outcome of these words: its clause's (:func:`_outcome_clause`), the
    statistic of its own name where the clause lists several (:func:`listed_statistic`)."""
    clause = _outcome_clause(text, outcome, arms)
    return clause_effect(text, listed_statistic(clause, outcome), measure_hint=measure_hint)


def listed_statistic(clause: str, outcome: frozenset[str]) -> str:
    """The part of ``clause`` whose bracketed p value is the outcome's, where the clause lists several outcomes each
    with its own ("… waist-to-hip ratio (1.1%, p < 0.05), percent body fat (8.29%, p < 0.001) and fat mass (8.1%,
    p < 0.001) and a significant increase in fat free mass (2.6%, p < 0.001) …"): cut after each bracket that states a
    p value, the part up to one that names more of the outcome's words than every other part; the clause itself
    otherwise. An estimate is printed right after the name it measures, so the first of a list is another outcome's
    (the row for fat-free mass showed the waist-to-hip ratio's "p < 0.05"). What follows the last such bracket is
    said of the whole list ("… (P < 0.001) in the 12 months postintervention") and names no part; a list of arms
    ("in groups B (64.29% P=.04) and C (70.73%, P=.007)") names the outcome in no part and is left whole."""
    ends, depth, opened = [], 0, 0
    for index, char in enumerate(clause):
        if char in "([":
            depth, opened = depth + 1, index if depth == 0 else opened
        elif char in ")]" and depth:
            depth -= 1
            if depth == 0 and _P_VALUE.search(clause[opened:index]):
                ends.append(index + 1)
    if len(ends) < 2:
        return clause
    parts = [clause[start:end] for start, end in zip([0, *ends], ends, strict=False)]
    named = [len(outcome & terms(part, folded=True)) for part in parts]
    best = max(range(len(parts)), key=named.__getitem__)
    if named[best] == 0 or named.count(named[best]) > 1:
        return clause
    return parts[best].lstrip(" ,;").removeprefix("and ").strip()


def _pairs(piece: str, arms: ArmTerms) -> bool:
    """Whether ``piece`` names the query's two arms as the pair it compares ("between A and B")."""
    for match in _BETWEEN.finditer(piece):
        first, second = terms(match.group("a"), folded=True), terms(match.group("b"), folded=True)
        if (arms.intervention & first and arms.comparator & second) or (
                arms.comparator & first and arms.intervention & second):
            return True
    return False


def _third_arm(piece: str, arms: ArmTerms) -> bool:
    """Whether ``piece`` compares a third arm with both of the query's ("the CO in the HES group was higher than
    that in the RS and C groups"): both arms are named after "than", neither before it, and something (the third
    arm) is. A clause that opens with its comparison ("Compared with placebo, …") is no such clause."""
    for than in THAN.finditer(piece):
        before = terms(piece[:than.start()], folded=True)
        if not before or than.group().lower() == "over":
            continue
        after = terms(piece[than.end():], folded=True)
        return bool(arms.intervention & after and arms.comparator & after
                    and not arms.intervention & before and not arms.comparator & before)
    return False


def _clauses(text: str) -> list[str]:
    """``text`` split at the :data:`_CLAUSE` boundaries (:func:`~..text.reading_clauses`)."""
    return reading_clauses(text, _CLAUSE)
