"""What one study found on the question's comparison: a clear change, a stated null, or nothing it can be held to.

A conflict (:mod:`..conflicts`) is two of these that disagree, so this reading is strict where it must be and
generous where abstracts are: it reads the item's best statements of the outcome (:func:`.direction.ranked_answers`:
a results sentence with its figures, the conclusion in words), and keeps each that

- names the comparison (:func:`names_comparison`): in one clause, the exposure where a compared factor stands
  (:func:`.compared.compared`: "patients *undergoing* surgery", "the vitamin D *group*", "statin *use* was
  associated") by at least half its core words, one of them more than a modifier ("the epidural group" for
  "epidural analgesia"; "low-dose" alone names no aspirin), or by a name the study gives it (a lay synonym's MeSH
  name, its own short form "TXA", in a trial "the intervention group"); and the outcome by most of its words, one of
  them what it is, not how it is counted ("risk"); not as a covariate, a time, what is measured, a member of a list
  of predictors, or a group of people;
- is clear (:func:`clear`): a change its p value or CI shows significant, or "significantly lower" said of the
  outcome itself; a null it states; never a trend;
- is the study's own finding, not a subgroup's, a post-hoc or a secondary analysis's.

The kept statements must agree; the side quotes the first that states its figures. The question's parts are read
by their cores (:func:`part_core`): "epidural analgesia in labour" compares epidural analgesia, "higher operative
mortality after coronary artery bypass grafting" measures operative mortality. A trial's own arms name its
comparator (:func:`comparator_of`), which also tells a head-to-head of two active treatments from a controlled one.
Code only, never a model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...models import Evidence
from ...study import DirectionQuery, OutcomeResult, StudyRecord
from ..extractive.entities import DRUG_CLASSES, NOT_DRUGS
from ..extractive.synonyms import lay_synonyms
from ..extractive.text import terms
from ..extractive.vocabulary import NULL_RESULT
from .arms import abbreviations
from .compared import compared, listed_together, only_a_group
from .direction import ranked_answers, with_figures
from .effects import significance
from .record import read_study
from .verify import source_text

__all__ = ["READ_UNITS", "Finding", "clear", "comparator_of", "distinctive", "exposure_names", "finding_of",
           "names_comparison", "part_core"]

READ_UNITS = 6
"""An item's statements of an outcome read for its finding (its results sentences, its conclusion)."""
NOT_READ = frozenset({"trial registration"})
"""Designs that state no finding of their own: a registry record (its posted results are the registry's)."""

_NULL_WORDS = re.compile(
    r"\bno (?:statistically )?significant\b|\bnot (?:statistically )?significant(?:ly)?\b|\bnon-?significant\b|"
    r"\bno (?:\w+ )?(?:effect|benefit|association|reduction|increase|change|improvement)s?\b|"
    r"\bdid not (?:differ|change|significantly)|\bno (?:\w+ )?differences?\b|\bnot (?:statistically )?different\b|"
    r"\bnot associated\b|\bno (?:\w+ )?association\b", re.IGNORECASE)
HOW_GIVEN = terms("supplementation supplements therapy treatment use intake administration consumption exposure "
                  "regimen prophylaxis")
"""How an exposure is given, not what it is: a trial of "vitamin D supplementation" speaks of "the vitamin D
group"."""
_MODIFIERS = terms("low high dose low-dose high-dose long short term long-term short-term early late daily weekly oral "
                   "intravenous perioperative preoperative postoperative dietary current regular routine prophylactic "
                   "adjuvant moderate heavy light postmenopausal premenopausal")
"""Words that qualify an exposure but name none on their own ("low-dose" of "low-dose aspirin")."""
_HEADS = terms("acid acids therapy therapies replacement preparation intervention interventions training inhibitor "
               "inhibitors agent agents drug drugs program programme management care fatty group groups")
"""Head nouns many exposures share ("omega-3 fatty *acid*", "hormone *replacement* therapy"): a clause naming only
these names no exposure."""
_OUTCOME_GENERIC = terms("major serious adverse event events disease diseases composite overall total any all-cause "
                         "new onset clinical childhood adulthood adult maternal neonatal infant paediatric pediatric")
"""Words of an outcome's name that trials vary freely ("major cardiovascular *events*", "cardiovascular *disease*"):
an outcome is named by its other words."""
_SYNONYMS = {"female": "women", "male": "men", "sex": "gender", "gender": "sex", "mortality": "death",
             "death": "mortality", "deaths": "mortality", "salt": "sodium", "sodium": "salt"}
"""One word for another that studies use of the same thing ("female sex": "in women"; "mortality": "death")."""
IMPLIED_COMPARATOR = "placebo control controls sham untreated nonusers non-users unexposed"
"""What an exposure is set against when neither the question nor the study names a comparator: the words of a
control arm, so that "fractures were fewer in the placebo group than in the vitamin D group" reads as vitamin D's
increase."""
_FORMS = {**dict.fromkeys(terms("supplementation supplements supplement supplemented capsules tablets"), "given"),
          **dict.fromkeys(terms("dietary diet food foods"), "eaten"),
          **dict.fromkeys(terms("serum plasma level levels concentration concentrations status"), "measured")}
"""Forms of one substance that are different exposures: given as a supplement, eaten in food, measured in blood."""
_MORPH = re.compile(r"osi$")
"""One condition, two word forms: "psychosis"/"psychotic", "thrombosis"/"thrombotic" (stems psychosi, psychot)."""
_BETWEEN_KINDS = re.compile(r"\bbetween (?:the )?[\w-]+(?: [\w-]+)? (?:and|or|vs\.?|versus) (?:the )?[\w-]+"
                            r"(?P<tail>(?: [\w-]+){1,2})", re.I)
_COMBINATION = re.compile(r"\s+(?:\w+\s+)?(?:combined with|plus|in combination with|together with|\+)\s", re.I)
_UNADJUSTED = re.compile(r"\b(?:before (?:matching|adjustment)|unadjusted|crude|univariat\w*|univariable)\b", re.I)
"""A result before adjustment or matching, which the adjusted one supersedes."""
_HEDGED = re.compile(r"\b(?:may|might|could|appears? to|seems? to|suggest\w*|possibl\w*|probabl\w*)\b", re.I)
_QUALIFIER = re.compile(r"\s+(?:after|in|during|among|following|targeting|before|at|within|on|for)\s.*$", re.I)
"""Where a part's qualifier starts: "epidural analgesia *in labour*", "mortality *after* non-cardiac surgery"."""
_DIRECTED = re.compile(r"^(?:(?:higher|lower|increased|reduced|decreased|greater|better|worse|improved|poorer|more|"
                       r"less|fewer|elevated|an?|the)\s+)+", re.I)
"""An outcome's direction, which the question asks and a study answers: "*higher* mortality" measures mortality."""
_PEOPLE = terms("patients patient people persons adults children women men subjects participants individuals")
_TREND = re.compile(r"\btrend\w*\b|\btended\b|\btendency\b|\bmarginal\w*\b|\bborderline\b", re.IGNORECASE)
_SUBGROUP = re.compile(
    r"\b(?:among|in) (?:the )?(?:patients|participants|subjects|those|women|men|people) (?:with|whose) "
    r"(?:an? |the )?[\w-]+(?: [\w-]+)? (?:score|level|count|stage|grade|index)s? (?:of )?"
    r"(?:[<>≥≤]|\d|more|less|greater|higher|lower|above|below)|"
    r"\b(?:in|among|within|for) (?:a |the |one |this |each )?sub-?groups?\b|\bsub-?group (?:of|analys)|"
    r"\bpost[- ]hoc\b|\bsubsets?\b|\bstrat(?:um|a)\b|\bexploratory\b|"
    r"\b(?:pre-?specified|secondary|sensitivity|per-protocol) analys[ie]s\b|"
    r"\b(?:among|of|in) (?:the )?[\d,]+ (?:patients|participants|subjects|women|men) (?:who|with)\b|"
    r"\b(?:among|in) (?:the )?(?:those|patients|participants|subjects|women|men) (?:aged|older|younger|over|under)\b",
    re.IGNORECASE)
"""A change in one subgroup, post hoc, exploratory or in a secondary analysis is not the study's finding."""
_SIGNIFICANT_CHANGE = re.compile(
    r"(?<!not )(?<!no )\b(?:significant(?:ly)?|statistically(?: significant(?:ly)?)?) (?:\w+ )?(?:higher|lower|"
    r"greater|less|more|fewer|shorter|longer|increas\w*|decreas\w*|reduc\w*|improv\w*|prolong\w*|worse\w*)\b",
    re.IGNORECASE)
_COPULAS = frozenset("was were is are been be".split())
MEASURE_WORDS = terms("risk odds rate rates incidence frequency level levels outcome outcomes prevalence chance "
                      "likelihood probability proportion number score scores value values")
"""Words that say how an outcome is counted, not what it is: a quote naming only "risk" of the outcome "risk of
pre-eclampsia" is about some other risk."""
_CLAUSES = re.compile(r";|•|\.\s+(?=[A-Z])|,?\s+(?:however|whereas|while|but)\b", re.IGNORECASE)
"""Where a quote's clauses part: "case number was not associated with survival; however, tumour stage was" holds
a null on case number and a finding on tumour stage, never a null on tumour stage."""
_LINK = re.compile(r"\b(?:associated|correlated|related|linked)(?: \w+ly)? (?:with|to)\b", re.IGNORECASE)
_FACTORS = re.compile(r"\b(?:predictors?|(?:risk|prognostic|independent) factors?) (?:of|for)\b|\bfactors? for\b",
                      re.IGNORECASE)
"""Where a list of factors meets what they predict: "age and symptom severity were predictors of coping" is no
finding of symptom severity on age ("predictors of survival were age and stage" still names age's finding)."""
_ADJUSTED = re.compile(r"\b(?:adjust\w*|controll\w*|stratif\w*|match\w*|account\w*|correct\w*) (?:for|by|on) [^.;()]*",
                       re.IGNORECASE)
"""A factor named only as a covariate ("after adjustment for age, smoking and education") is not what the quote
reports on."""
_DIAGNOSTIC = re.compile(r"\bc-statistic|\bAUC\b|\barea under\b|\bsensitivity\b|\bspecificity\b|\baccuracy\b",
                         re.IGNORECASE)
CONTROL = re.compile(r"\b(?:placebo|control|usual|standard|conventional|routine|sham|no |none|without|not receiv|"
                     r"did not|observation|untreated|waiting list|wait-list|nothing)", re.IGNORECASE)
"""A comparator that is the exposure's absence (or the care everyone gets), not another active treatment."""
_TRIAL_ARMS = ("intervention group", "treatment group", "treated group", "active group", "supplemented group",
               "experimental group", "exposed group", "intervention arm", "treatment arm", "active treatment")
"""How a trial names its intervention arm without naming the intervention."""
_BOTH_ARMS = ("groups", "arms")
"""How a trial whose arms were read names its comparison ("did not differ between the groups")."""
_TRIALS = frozenset({"randomised trial", "non-randomised trial"})
_LETTER_NUMBER = re.compile(r"^([a-z])\d+$")


@dataclass(frozen=True)
class Finding:
    """What one item found for the question's comparison, with the record it was read from."""

    result: OutcomeResult
    record: StudyRecord
    comparator: str | None
    """The study's own comparator when it is another active treatment (a head-to-head), '' when it is a control,
    None when the study names no arms."""


def part_core(phrase: str, *, outcome: bool = False) -> str:
    """A question part without what qualifies it: "epidural analgesia in labour" → "epidural analgesia", "higher
    operative mortality after coronary artery bypass grafting" → "operative mortality" (an outcome loses its
    direction too). A part that would be left naming only people keeps its words ("patients with diabetes")."""
    core = _QUALIFIER.sub("", phrase)
    core = (_DIRECTED.sub("", core) if outcome else core).strip()
    return core if terms(core) - _PEOPLE else phrase


def exposure_names(exposure: str, text: str, *, trial: bool = False, arms: tuple[str, str] | None = None
                   ) -> list[tuple[str, frozenset[str]]]:
    """The ways a study may name the question's exposure. First its core words without the word for how it is given
    ("vitamin D" for "vitamin D supplementation", "statin" for "statin use"): a clause may name it by some of them
    (:func:`names_comparison`). Then names a clause must hold whole: a lay synonym's MeSH name ("vitamin D" →
    cholecalciferol), a short form the article defines for it ("tranexamic acid (TXA)"), a word studies use for
    another ("women" for "female"), in a trial the words it uses for its intervention arm ("the intervention
    group"), and in a trial whose ``arms`` (intervention, comparator) were read, what tells its intervention arm
    from the other ("early" of "early mobilisation" against "delayed mobilisation") and its two groups ("did not
    differ between the groups")."""
    phrase = part_core(exposure)
    words = terms(phrase)
    core = words - HOW_GIVEN or words
    names = [(phrase, core)]
    bare = " ".join(w for w in phrase.split() if not terms(w) <= HOW_GIVEN) or phrase
    for synonym in dict.fromkeys([*lay_synonyms(phrase), *lay_synonyms(bare)]):
        if terms(synonym):
            names.append((synonym, terms(synonym)))
    flat = terms(phrase.replace("-", " ")) - HOW_GIVEN
    for short, long in abbreviations(text).items():  # "17-alpha-hydroxyprogesterone caproate (17OHPC)"
        spelled = terms(long.replace("-", " ")) - HOW_GIVEN
        if spelled and spelled <= flat <= spelled | _MODIFIERS:
            names.append((short, terms(short) or frozenset({short})))
    names += [(member, terms(member)) for member in class_members(phrase, text)]
    for words_of in (phrase.split(), [w for w in phrase.split() if not terms(w) <= _MODIFIERS]):
        initials = "".join(w[0] for w in re.findall(r"[A-Za-z][\w-]*", " ".join(words_of))).lower()
        if len(initials) >= 3:  # "PCI" for percutaneous coronary intervention, "HRT" for hormone replacement therapy
            names.append((initials.upper(), frozenset({initials})))
    for word in phrase.split():
        if (other := _SYNONYMS.get(word.lower())) and (swapped := terms(phrase.replace(word, other)) - HOW_GIVEN):
            names.append((phrase.replace(word, other), swapped))
    if trial:
        names += [(arm, terms(arm)) for arm in _TRIAL_ARMS]
    if arms:
        own = terms(arms[0]) - terms(arms[1]) - HOW_GIVEN - _HEADS
        if own and own <= core:
            names.append((arms[0], own))
        names += [(arm, terms(arm)) for arm in _BOTH_ARMS]
    return list(dict.fromkeys(names))


def class_members(exposure: str, text: str) -> list[str]:
    """The members of a drug class the exposure names that ``text`` names ("hydrocortisone" for corticosteroids:
    :data:`~synthesist.agents.extractive.entities.DRUG_CLASSES`)."""
    lowered = " ".join(w.rstrip("s") for w in exposure.lower().replace("-", " ").split())
    endings = [e for name, ends in DRUG_CLASSES.items() if name.replace("-", " ") in lowered for e in ends]
    if not endings:
        return []
    found = (word.lower() for word in re.findall(r"[A-Za-z][A-Za-z-]{3,}", text))
    return list(dict.fromkeys(w for w in found if any(w.endswith(e) or e in w.split("-") for e in endings)
                              and w not in NOT_DRUGS and len(w) > len(min(endings, key=len)) + 2))


def distinctive(exposure: str) -> frozenset[str]:
    """The exposure's words that tell it from others: its core without how it is given, its modifiers and the head
    nouns exposures share ("hormone" of "postmenopausal hormone replacement therapy"). A study that holds them all
    is about the exposure, and a clause of it may name the exposure by any one of them."""
    words = terms(part_core(exposure))
    return words - HOW_GIVEN - _MODIFIERS - _HEADS or words - HOW_GIVEN or words


def comparator_of(record: StudyRecord, exposure: str) -> str | None:
    """The trial's comparator arm when its intervention arm is the exposure: its label when it is another active
    treatment (a head-to-head: a short name that is no control and shares no word with the exposure, as
    "intravenous meperidine" against epidural analgesia), '' when it is a control or less of the exposure itself
    (placebo, usual care, "delayed mobilisation", "conventional insulin therapy"), None when the record reads no arms
    or the exposure is not its intervention."""
    roles = {arm.role: arm.label for arm in record.arms}
    if "intervention" not in roles or "comparator" not in roles:
        return None
    core = terms(part_core(exposure)) - HOW_GIVEN - _MODIFIERS
    if not core & terms(roles["intervention"]):
        return None
    other = roles["comparator"]
    if CONTROL.search(other) or core & terms(other) or len(other.split()) > 6 or re.search(r"\d", other):
        return ""
    return other


def finding_of(item: Evidence, query: DirectionQuery, records: Mapping[str, StudyRecord] | None = None
               ) -> Finding | None:
    """What ``item`` found for the query, when it states a clear finding (module docstring), else None."""
    if item.source == "trials":
        return None
    record = (records or {}).get(item.id) or read_study(item)
    if record.design in NOT_READ:
        return None
    comparator = comparator_of(record, query.intervention)
    arms = next((a.label for a in record.arms if a.role == "comparator"), "") if comparator is not None else ""
    text = source_text(item)
    labels = (next(a.label for a in record.arms if a.role == "intervention"), arms) if comparator is not None else None
    names = exposure_names(query.intervention, text, trial=record.design in _TRIALS, arms=labels)
    own = " ".join(name for name, _ in names[1:] if name not in _TRIAL_ARMS and name not in _BOTH_ARMS)
    reading = DirectionQuery(intervention=f"{part_core(query.intervention)} {own}".strip(),
                             comparator=query.comparator or arms or IMPLIED_COMPARATOR,
                             outcome=_outcome_words(query.outcome))
    outcomes = outcome_names(query.outcome, text)
    partial = distinctive(query.intervention) <= terms(f"{item.title or ''} {item.content}")
    found: list[OutcomeResult] = []
    seen: set[str] = set()
    for asked in _outcome_queries(reading):
        for result, clause in ranked_answers(item, asked, limit=READ_UNITS, guess=False):
            if result.quote not in seen and _kept(result, clause, asked, names, partial, outcomes):
                seen.add(result.quote)
                found.append(result.model_copy(update={"outcome": query.outcome, "comparator": query.comparator}))
    if not found or len({r.direction for r in found}) > 1:
        return None
    return Finding(with_figures(found), record, None if query.comparator else comparator)


def outcome_names(outcome: str, text: str) -> list[frozenset[str]]:
    """The ways a study may name the question's outcome: its words (:func:`_outcome_words`), the other word trials
    use ("death" for "mortality"), and a short form the article defines for it ("necrotising enterocolitis (NEC)")."""
    phrase = _outcome_words(outcome)
    words = terms(phrase)
    names = [words, terms(" ".join(_SYNONYMS.get(w.lower(), w) for w in phrase.split()))]
    for short, long in abbreviations(text).items():
        if words - MEASURE_WORDS and words - MEASURE_WORDS <= terms(long):
            names.append(terms(short) or frozenset({short}))
    return list(dict.fromkeys(names))


def _outcome_words(outcome: str) -> str:
    """The outcome as a study may word it: its core without the words trials vary ("major cardiovascular events" →
    "cardiovascular"), or its core when that is all it has."""
    core = part_core(outcome, outcome=True)
    kept = " ".join(w for w in core.split() if not terms(w) <= _OUTCOME_GENERIC)
    return kept if terms(kept) else core


def _outcome_queries(query: DirectionQuery) -> list[DirectionQuery]:
    """The query, then the same with a trial's other word for its outcome ("death" for "mortality")."""
    words = query.outcome.split()
    other = " ".join(_SYNONYMS.get(w.lower(), w) for w in words)
    return [query] + ([query.model_copy(update={"outcome": other})] if other != query.outcome else [])


def _kept(result: OutcomeResult, clause: str, query: DirectionQuery, names: Sequence[tuple[str, frozenset[str]]],
          partial: bool = False, outcomes: Sequence[frozenset[str]] = ()) -> bool:
    """One statement is a finding on the question's comparison: a direction, clear in the clause it was read from,
    no diagnostic figure, not a subgroup's or a secondary analysis's change, and it names the comparison (by any
    distinctive word of the exposure when the study is about the whole of it: ``partial``)."""
    if result.direction not in ("increased", "decreased", "no_difference") or not result.quote:
        return False
    if _DIAGNOSTIC.search(result.quote) or result.direction != "no_difference" and _SUBGROUP.search(result.quote):
        return False
    if _UNADJUSTED.search(result.quote):
        return False
    return clear(result, clause) and any(
        names_comparison(result.quote, query, name, words, partial=partial and not i, outcomes=outcomes)
        for i, (name, words) in enumerate(names))


def clear(result: OutcomeResult, clause: str = "") -> bool:
    """A change the quote shows significant (a p value or a CI; or "significantly lower" in the ``clause`` the
    direction was read from, said of the outcome: "a significant improvement of symptoms" says nothing of
    mortality), or a null the quote states in words or by its p value or CI — not a trend ("tended to", "a
    non-significant trend"), nor a CI the authors read as a possible effect ("may slightly reduce … (RR 0.93, 95% CI
    0.84 to 1.03)")."""
    stated = significance(result.quote, result.effect)
    if result.direction == "no_difference":
        if _TREND.search(result.quote):
            return False
        if _NULL_WORDS.search(result.quote) or NULL_RESULT.search(result.quote):
            return True
        return stated == "not_significant" and not _HEDGED.search(clause or result.quote)  # "may slightly reduce"
    return stated == "significant" or stated == "unknown" and _significant_on(clause or result.quote,
                                                                             terms(result.outcome))


def _significant_on(clause: str, outcome: frozenset[str]) -> bool:
    """The clause calls a change in the outcome significant in words: "significantly improved event-free survival",
    "fractures were significantly fewer", "a significant reduction in fractures" — the outcome's words right after
    the change (six words at most) or as the subject of "was/were significantly …"; not negated ("no significant
    reduction")."""
    for match in _SIGNIFICANT_CHANGE.finditer(clause):
        after = clause[match.end():].split()[:6]
        before = clause[:match.start()].split()[-4:]
        if outcome & terms(" ".join(after)):
            return True
        if before and before[-1].lower() in _COPULAS and outcome & terms(" ".join(before[:-1])):
            return True
    return False


def names_comparison(quote: str, query: DirectionQuery, name: str | None = None,
                     exposure: frozenset[str] | None = None, *, partial: bool = False,
                     outcomes: Sequence[frozenset[str]] = ()) -> bool:
    """One clause of ``quote`` (:data:`_CLAUSES`) names the comparison (module docstring): the exposure by
    ``exposure`` (default: the query's core words) and the query's outcome. A sentence about another factor of
    the same study, or a clause about one factor next to a clause about another, is no finding on the question."""
    name = name or part_core(query.intervention)
    if exposure is None:
        exposure = terms(name) - HOW_GIVEN or terms(name)
    named = outcomes or [terms(_outcome_words(query.outcome))]
    return bool(exposure) and any(_clause_names(clause, name, exposure, outcome, partial)
                                  for clause in _split_clauses(quote) for outcome in named)


def _split_clauses(quote: str) -> list[str]:
    """``quote`` cut at :data:`_CLAUSES`, never inside brackets ("(2.3% vs 2.1%; P = .71)" stays whole)."""
    depth, cuts = 0, []
    for index, char in enumerate(quote):
        depth = depth + (char in "([") - (char in ")]") if char in "()[]" else depth
        depth = max(depth, 0)
        if depth == 0 and (match := _CLAUSES.match(quote, index)):
            cuts.append((match.start(), match.end()))
    pieces, start = [], 0
    for begin, end in cuts:
        if begin >= start:
            pieces.append(quote[start:begin])
            start = end
    return [*pieces, quote[start:]]


def _clause_names(clause: str, intervention: str, exposure: frozenset[str], outcome: frozenset[str],
                  partial: bool = False) -> bool:
    words = terms(_without_covariates(clause, exposure))
    words |= {m.group(1) for w in words if (m := _LETTER_NUMBER.match(w))}  # "vitamin D3" names vitamin D
    words |= {w[:-1] for w in words if len(w) > 3 and w.endswith("s")}  # "PPIs" names PPI
    exposure = frozenset(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in exposure)
    outcome = outcome - exposure  # "blood loss" for "blood pressure": "blood" names the exposure, not the outcome
    specific = outcome - MEASURE_WORDS or outcome  # "risk" in "relative risk" names no "risk of lung cancer"
    forms = words | {_MORPH.sub("ot", w) for w in words}  # "psychotic" names psychosis
    named = frozenset(w for w in specific if w in words or _MORPH.sub("ot", w) in forms)
    factor = exposure & words
    if not named or len(named) * 2 <= len(specific) and len(specific) > 1:
        return False
    too_little = not factor - _MODIFIERS - _HEADS if partial else (len(factor) < math.ceil(len(exposure) / 2)
                                                                    or not factor - _MODIFIERS)
    if too_little or _another_form(intervention, clause) or _combined(clause, factor) or _within(clause, factor):
        return False
    first = re.escape(intervention.split()[0])
    if re.search(rf"\b(?:risk (?:of|for)|incident|incidence of|development of|odds of|rates? of|proportions? of|"
                 rf"numbers? of|likelihood of)\s+(?:\w+\s+){{0,2}}?{first}", clause, re.IGNORECASE):
        return False
    link = _LINK.search(clause)
    if link is not None:
        subject = terms(clause[:link.start()])
        if not (subject & exposure or subject & outcome):
            return False
    for joint in filter(None, (link, _FACTORS.search(clause))):
        subject, linked = clause[:joint.start()], terms(clause[joint.end():])
        if not named & linked and listed_together(subject, factor, named):  # two factors of one list
            return False
    return (_subject_of(link, clause, factor) or compared(clause, factor)) and not only_a_group(clause, named)


def _subject_of(link: re.Match[str] | None, clause: str, factor: frozenset[str]) -> bool:
    """The factor is what the association is of: it stands at most six words before "associated with", no comma
    between ("current smoking at the index date was associated with …")."""
    if link is None:
        return False
    before = re.findall(r"[\w'-]+|,", clause[:link.start()])[-7:]
    last = max((i for i, word in enumerate(before) if terms(word) & factor), default=None)
    return last is not None and "," not in before[last:]


def _within(clause: str, factor: frozenset[str]) -> bool:
    """The clause compares two kinds of the exposure ("did not differ *between annual and biennial* screening"),
    not the exposure with its absence."""
    for match in _BETWEEN_KINDS.finditer(clause):
        if terms(match.group("tail")) & factor:
            return True
    return False


def _combined(clause: str, factor: frozenset[str]) -> bool:
    """The clause names the exposure in a combination, another exposure ("MBP *combined with* oral antibiotics",
    "aspirin *plus* clopidogrel")."""
    for word in re.finditer(r"[\w'-]+", clause):
        if terms(word.group()) & factor and _COMBINATION.match(clause, word.end()):
            return True
    return False


def _another_form(exposure: str, clause: str) -> bool:
    """The clause names the exposure in another form than the question (:data:`_FORMS`): "beta-carotene *from food*"
    or "*serum* vitamin D" for a question on supplementation, "vitamin D *supplements*" for one on dietary intake."""
    asked = {form for word in terms(exposure) if (form := _FORMS.get(word))}
    said = {form for word in terms(clause) if (form := _FORMS.get(word))}
    return bool(asked and said) and not asked & said


def _without_covariates(clause: str, exposure: frozenset[str]) -> str:
    """The clause without the factors it only adjusts for ("after adjustment for age, sex and smoking"); a list of
    covariates ends at the comma before the exposure ("After adjustment for age, sex and trauma, cannabis use at
    baseline increased …" keeps "cannabis use at baseline increased …")."""
    def cut(match: re.Match[str]) -> str:
        span = match.group(0)
        for word in re.finditer(r"[\w'-]+", span):
            if terms(word.group()) & exposure:
                comma = span.rfind(",", 0, word.start())
                return " " + span[comma + 1:] if comma >= 0 else " "
        return " "

    return _ADJUSTED.sub(cut, clause)
