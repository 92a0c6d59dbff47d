"""How a study names the question's parts: the exposure and the outcome, in one clause of a finding.

A study rarely words the question as the question does. The parts are read by their cores (:func:`part_core`:
"epidural analgesia" of "epidural analgesia in labour", "operative mortality" of "higher operative mortality after
coronary artery bypass grafting"), and each may be named several ways (:func:`exposure_names`, :func:`outcome_names`):
its core words (by any distinctive one, :func:`distinctive`, when the study is about the whole exposure), a lay
synonym's MeSH name, the article's own short form ("TXA", "NEC"), its initials ("PCI"), a drug class's members
("hydrocortisone" for corticosteroids), a word studies use for another ("women" for female, "death" for mortality),
and in a trial whose arms were read, its arms ("the intervention group", "between the groups").

:func:`names_comparison` says whether one clause of a quote names the comparison: the exposure where a compared
factor stands (:func:`.compared.compared`, or the subject of "was associated with") and most of the outcome's
specific words — not as a covariate, what is measured, a member of a list of predictors, a group of people, another
form of the exposure ("beta-carotene *from food*" for supplementation), a combination ("MBP *combined with*
antibiotics") or a comparison of two kinds of it ("*between annual and biennial* screening"). :mod:`.finding` reads
what a study found with it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

from ...study import DirectionQuery
from .. import lexicon
from ..entities import DRUG_CLASSES, NOT_DRUGS
from ..study_reader import known_word
from ..synonyms import LAY_SYNONYMS, lay_synonyms, measure_names, other_names
from ..text import one_edit_apart, split_clauses, terms
from .arms import abbreviations
from .compared import compared, listed_together, only_a_group

__all__ = ["BOTH_ARMS", "DOSE", "HOW_GIVEN", "LINK", "MEASURE_WORDS", "MODIFIERS", "PEOPLE", "SYNONYMS", "TRIAL_ARMS",
           "amounts_as_written", "article_name", "article_outcome", "as_spelled", "as_the_article_writes",
           "class_members", "distinctive", "exposure_names", "measured_as_asked", "names_comparison", "outcome_names",
           "outcome_words", "part_core", "same_word", "spelled_out", "with_synonyms"]

HOW_GIVEN = terms(" ".join(lexicon.word_list("naming", "HOW_GIVEN")))
"""How an exposure is given, not what it is: a trial of "vitamin D supplementation" speaks of "the vitamin D
group" (``lexicons/naming.toml``)."""

MODIFIERS = terms(" ".join(lexicon.word_list("naming", "MODIFIERS")))
"""Words that qualify an exposure but name none on their own ("low-dose" of "low-dose aspirin";
``lexicons/naming.toml``)."""

_HEADS = terms(" ".join(lexicon.word_list("naming", "HEADS")))
"""Head nouns many exposures share ("omega-3 fatty *acid*"): a clause naming only these names no exposure
(``lexicons/naming.toml``)."""

_OUTCOME_QUALIFIERS = terms(" ".join(lexicon.word_list("naming", "OUTCOME_QUALIFIERS")))
"""When or how badly, not what: "delirium" names postoperative delirium (``lexicons/naming.toml``)."""
_KINDS = terms(" ".join(lexicon.word_list("naming", "KINDS")))
"""Words that make one kind of an outcome another ("term" and "preterm" preeclampsia; ``lexicons/naming.toml``)."""
_OUTCOME_GENERIC = terms(" ".join(lexicon.word_list("naming", "OUTCOME_GENERIC")))
"""Words of an outcome's name that trials vary freely ("major cardiovascular *events*"): an outcome is named by its
other words (``lexicons/naming.toml``)."""

SYNONYMS = {term: equivalent for term, (equivalent,) in lexicon.pairs("naming", "SYNONYMS").items()}
"""One word for another that studies use of the same thing ("female sex": "in women"; "mortality": "death";
``lexicons/naming.toml``)."""

_FORMS = {**dict.fromkeys(terms(" ".join(lexicon.word_list("naming", "FORMS_GIVEN"))), "given"),
          **dict.fromkeys(terms(" ".join(lexicon.word_list("naming", "FORMS_EATEN"))), "eaten"),
          **dict.fromkeys(terms(" ".join(lexicon.word_list("naming", "FORMS_MEASURED"))), "measured")}
"""Forms of one substance that are different exposures: given as a supplement, eaten in food, measured in blood
(``lexicons/naming.toml``)."""

_MORPH = re.compile(r"osi$")
"""One condition, two word forms: "psychosis"/"psychotic", "thrombosis"/"thrombotic" (stems psychosi, psychot)."""

_BETWEEN_KINDS = re.compile(r"\bbetween (?:the )?[\w-]+(?: [\w-]+)? (?:and|or|vs\.?|versus) (?:the )?[\w-]+"
                            r"(?P<tail>(?: [\w-]+){1,2})", re.I)

_NEIGHBOURS = terms(" ".join(lexicon.word_list("naming", "NEIGHBOURS")))
"""Words beside an exposure that say how, when or in whom, never another kind of it
(``reading/lexicons/naming.toml``)."""
_KIND_OF = lexicon.pattern("naming", "KIND_OF")
"""A word before the exposure that names a kind of it: two of them in one clause compare two kinds
(``lexicons/naming.toml``)."""
_COMBINATION = re.compile(r"\s+(?:\w+\s+)?(?:combined with|plus|in combination with|together with|\+)\s", re.I)

_QUALIFIER = re.compile(r"\s+(?:after|in|during|among|following|targeting|before|at|within|on|for)\s.*$", re.I)
"""Where a part's qualifier starts: "epidural analgesia *in labour*", "mortality *after* non-cardiac surgery"."""

_DIRECTED = lexicon.pattern("naming", "DIRECTED")
"""An outcome's direction, which the question asks and a study answers: "*higher* mortality" measures mortality
(``lexicons/naming.toml``)."""

PEOPLE = terms(" ".join(lexicon.word_list("naming", "PEOPLE")))
"""Words for people or their groups: a part naming only these names nothing studied (``lexicons/naming.toml``)."""
DOSE = re.compile(r"(?<![\d,.])(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s?(?:mg|g|µg|mcg|ug|iu|IU|mg/kg|mmol|ml|mL|"
                  r"units?)\b(?:/(?:d|day|kg))?")
"""A dose as printed ("800 IU", "500,000 IU", "40 mg/day")."""

MEASURE_WORDS = terms(" ".join(lexicon.word_list("naming", "MEASURE_WORDS")))
"""Words that say how an outcome is counted, not what it is: a quote naming only "risk" of the outcome "risk of
pre-eclampsia" is about some other risk (``lexicons/naming.toml``)."""

_CLAUSES = re.compile(r";|•|(?<!\bvs)(?-i:\.\s+(?=[A-Z]))|,?\s+(?:however|whereas|while|but)\b", re.IGNORECASE)
"""Where a quote's clauses part: "case number was not associated with survival; however, tumour stage was" holds
a null on case number and a finding on tumour stage, never a null on tumour stage."""

LINK = lexicon.pattern("naming", "LINK")
"""An association in words: it names no side ("obesity is associated with asthma symptom persistence";
``lexicons/naming.toml``)."""

_FACTORS = lexicon.pattern("naming", "FACTORS")
"""Where a list of factors meets what they predict: "age and symptom severity were predictors of coping" is no
finding of symptom severity on age (``lexicons/naming.toml``)."""

_ADJUSTED = lexicon.pattern("naming", "ADJUSTED")
"""A factor named only as a covariate ("after adjustment for age, smoking and education") is not what the quote
reports on (``lexicons/naming.toml``)."""

TRIAL_ARMS = lexicon.phrases("naming", "TRIAL_ARMS")
"""How a trial names its intervention arm without naming the intervention (``lexicons/naming.toml``)."""

BOTH_ARMS = lexicon.phrases("naming", "BOTH_ARMS")
"""How a trial whose arms were read names its comparison ("did not differ between the groups";
``lexicons/naming.toml``)."""

_LETTER_NUMBER = re.compile(r"^([a-z])\d+$")

def part_core(phrase: str, *, outcome: bool = False) -> str:
    """A question part without what qualifies it: "epidural analgesia in labour" → "epidural analgesia", "higher
    operative mortality after coronary artery bypass grafting" → "operative mortality" (an outcome loses its
    direction too). A part that would be left naming only people keeps its words ("patients with diabetes")."""
    core = _QUALIFIER.sub("", phrase)
    core = (_DIRECTED.sub("", core) if outcome else core).strip()
    return core if terms(core) - PEOPLE else phrase


def exposure_names(exposure: str, text: str, *, trial: bool = False, arms: tuple[str, str] | None = None
                   ) -> list[tuple[str, frozenset[str]]]:
    """The ways a study may name the question's exposure. First its core words without the word for how it is given
    ("vitamin D" for "vitamin D supplementation", "statin" for "statin use"): a clause may name it by some of them
    (:func:`names_comparison`). Then names a clause must hold whole: a lay synonym's MeSH name ("vitamin D" →
    cholecalciferol), a short form the article defines for it ("tranexamic acid (TXA)"), a word studies use for
    another ("women" for "female"), and in a trial whose ``arms`` (intervention, comparator) were read with the
    exposure as its intervention, what tells its intervention arm from the other ("early" of "early mobilisation"
    against "delayed mobilisation"), the words it uses for that arm ("the intervention group") and its two groups
    ("did not differ between the groups")."""
    phrase = part_core(exposure)
    words = terms(phrase)
    core = words - HOW_GIVEN or words
    names = [(phrase, core)]
    bare = " ".join(w for w in phrase.split() if not terms(w) <= HOW_GIVEN) or phrase
    for synonym in dict.fromkeys([*lay_synonyms(phrase), *lay_synonyms(bare), *_lay_names(core)]):  # fish oil ↔ omega-3
        if terms(synonym):
            names.append((synonym, terms(synonym)))
    flat = terms(phrase.replace("-", " ")) - HOW_GIVEN
    for short, long in abbreviations(text).items():  # "tranexamic acid (TXA)"
        spelled = terms(long.replace("-", " ")) - HOW_GIVEN
        if spelled and spelled <= flat <= spelled | MODIFIERS:
            names.append((short, terms(short) or frozenset({short})))
    names += [(member, terms(member)) for member in class_members(phrase, text)]
    if "-" in phrase and (split := terms(phrase.replace("-", " ")) - HOW_GIVEN) != core:
        names.append((phrase.replace("-", " "), split))  # "night-shift": night, shift
    for words_of in (phrase.split(), [w for w in phrase.split() if not terms(w) <= MODIFIERS]):
        initials = _initials(" ".join(words_of)).lower()
        if len(initials) >= 3:  # "PCI" for percutaneous coronary intervention, "HRT" for hormone replacement therapy
            names.append((initials.upper(), frozenset({initials})))
    for word in phrase.split():
        if other := SYNONYMS.get(word.lower()):
            swapped_phrase = re.sub(rf"\b{re.escape(word)}\b", other, phrase)
            if swapped := terms(swapped_phrase) - HOW_GIVEN:
                names.append((swapped_phrase, swapped))
    if trial and arms:
        own = terms(arms[0]) - terms(arms[1]) - HOW_GIVEN - _HEADS
        if own and own <= core:
            names.append((arms[0], own))
        names += [(arm, terms(arm)) for arm in (*TRIAL_ARMS, *BOTH_ARMS)]
    return list(dict.fromkeys(names))


def _lay_names(core: frozenset[str]) -> list[str]:
    """The lay terms whose MeSH headings are the exposure's ``core`` words ("fish oil" for omega-3 fatty acids)."""
    return [term for term, headings in LAY_SYNONYMS.items() if any(terms(h) == core for h in headings)]


def _initials(phrase: str) -> str:
    """The first letters of the words of ``phrase`` ("pci" of percutaneous coronary intervention)."""
    return "".join(word[0] for word in re.findall(r"[A-Za-z][\w-]*", phrase))


_TRADEMARK_STAND_INS = lexicon.word_list("naming", "TRADEMARK_STAND_INS")
MIN_RESPELLED = 5
"""The shortest word :func:`as_spelled` reads as another: of four letters, a word one edit away is too often another
word ("supl": "supp", "suppl")."""
_LETTERS = re.compile(r"[^\W\d_]+")


_AMOUNT = re.compile(r"(?<![\w.,·])(\d+(?:[.·]\d+)?)( ?)([^\W\d_]{1,5})\b")
"""A number and the word after it, with a space between them or none ("3mg", "3 mg", "24h"): an amount and its
unit as :func:`amounts_as_written` reads them."""


def amounts_as_written(phrase: str, text: str) -> str:
    """``phrase`` with each amount written as the article ``text`` writes it: a number glued to its unit that the
    article writes apart ("Siltuximab 3mg/kg", "3 mg kg–1"), or apart where the article glues them ("5 mg", "5mg").
    The tokenizer reads "3mg" as one word and "3 mg" as two, so either way round the question held a word the
    article lacks, and that word is often what tells one arm from another (3 against 6 mg/kg). Of the 4,923 prompts of
    the unlabelled Evidence Inference trials outside the end-to-end folders, the glued doses "5mg", "20mg", "3mg",
    "300mg" and "8mg" were held by their own article in none of 32 prompts (2026-12-05). An amount is rewritten only
    where the article never writes it the question's way and does write it the other."""

    def written(match: re.Match[str]) -> str:
        number, space, unit = match.groups()
        other = f"{number}{'' if space else ' '}{unit}"
        if _writes(text, match.group()) or not _writes(text, other):
            return match.group()
        return other

    return _AMOUNT.sub(written, phrase)


def _writes(text: str, amount: str) -> bool:
    return re.search(rf"(?<![\w.,·]){re.escape(amount)}(?![^\W_])", text, flags=re.IGNORECASE) is not None


def as_spelled(phrase: str, text: str) -> str:
    """``phrase`` with each word that the article ``text`` lacks and that no two of the study reader's training
    articles hold (:func:`~synthesist.reading.study_reader.known_word`) written as the article writes it, where that
    is plain: with a trademark sign's typed stand-in dropped ("ForsLeanTM" for "ForsLean™":
    :data:`_TRADEMARK_STAND_INS`), else the one word of the article one letter added, dropped, changed or two
    letters swapped away, for a word of :data:`MIN_RESPELLED` letters or more ("Placbeo", "Creatitine", "Collony":
    :func:`~synthesist.reading.text.one_edit_apart`), else, where none is, the one word whose stem is one edit from
    its stem ("Inravenous" of "intravenously"; spellings first, for "Collony" is one letter from "Colony" and its
    stem one from "colon"'s). A word with two such neighbours ("ffect": "effect" and "affect") or only one two edits
    away ("saxagliptin" from "sitagliptin") is left as it is; digits are never changed. Read from the clinicians'
    Evidence Inference prompts (2026-12-05): of the words of the train and 800 unlabelled trials' prompts that their
    article lacks and no training article holds, the stems of 57 lie one edit from the stem of one of their
    article's words, nearly all misspellings of it; of the 44 two edits away, the typed "TM"s are the article's name
    and the rest as often another word ("treatmen": "threaten") (golden ``tests/data/spellings.jsonl``). An amount
    is first written as the article writes it (:func:`amounts_as_written`)."""
    phrase = amounts_as_written(phrase, text)
    odd = {word for word in _LETTERS.findall(phrase) if len(word) >= MIN_RESPELLED
           and (folded := terms(word, folded=True)) and not any(map(known_word, folded))}
    if not odd:
        return phrase
    held = terms(text, folded=True)
    odd = {word for word in odd if not terms(word, folded=True) <= held}
    if not odd:
        return phrase
    written: dict[str, str] = {}
    for word in _LETTERS.findall(text):
        written.setdefault(word.lower(), word)

    def respelled(word: str) -> str:
        for mark in _TRADEMARK_STAND_INS:
            if word.endswith(mark) and len(stem := word[:-len(mark)]) >= 3 and stem.lower() in written:
                return stem
        near = {_fold_of(found): found for lowered, found in written.items() if one_edit_apart(word.lower(), lowered)}
        if not near and len(stem := _fold_of(word)) >= MIN_RESPELLED:  # "Inravenous" of "intravenously"
            by_stem: dict[str, list[str]] = {}
            for found in written.values():
                if one_edit_apart(stem, other := _fold_of(found)):
                    by_stem.setdefault(other, []).append(found)
            near = {other: min(found, key=lambda f: abs(len(f) - len(word))) for other, found in by_stem.items()}
        return next(iter(near.values())) if len(near) == 1 else word

    return _LETTERS.sub(lambda match: respelled(match.group()) if match.group() in odd else match.group(), phrase)


def _fold_of(word: str) -> str:
    """The one folded term of ``word`` (:func:`~synthesist.reading.text.terms`), or ``""`` for a stop word."""
    return next(iter(terms(word, folded=True)), "")


def as_the_article_writes(query: DirectionQuery, text: str) -> DirectionQuery:
    """``query`` as the study reader reads it in the article ``text``: the exposure by :func:`article_name`, the
    comparator :func:`as_spelled`, the outcome by :func:`article_outcome`."""
    return query.model_copy(update={"intervention": article_name(query.intervention, text),
                                    "comparator": as_spelled(query.comparator, text),
                                    "outcome": article_outcome(query.outcome, text)})


def article_name(exposure: str, text: str) -> str:
    """The question's exposure as the article ``text`` names it, for the study reader, which matches words as its
    arms do (:func:`~synthesist.reading.text.terms`, folded): the exposure itself when the article holds all its
    words; without the words of how it is given and its modifiers that the article lacks, when it holds the rest
    ("probiotic" for "probiotic supplementation": the trial speaks of "the probiotic group"; "colchicine" for
    "low-dose colchicine"); else another name for the whole of it that the article holds: a drug class's member
    ("hydrocortisone" for corticosteroids), a lay synonym of the whole phrase either way ("fish oil" for omega-3
    fatty acids), its initials where the article writes them in capitals ("PCI", "MBP": often never defined in an
    abstract), a short form the article defines for it or for a longer name that holds all its words ("DSG" for
    "diclofenac gel", defined as "Diclofenac Sodium Topical Gel": :func:`_longer_names`); else the exposure
    unchanged. A head noun ("programme", "therapy") is never dropped and a word is never renamed alone: "clinical
    weight loss programme" is not "clinical weight loss", which any weight-loss trial holds. An article that holds
    the exposure's words and one of these other names as well (a class's member: "antibiotic prophylaxis" given as
    cefazolin, "bisphosphonates" as zoledronic acid; a lay synonym; its initials; a longer name's short form) is
    read for both, the first such name it holds: its results often speak of "the cefazolin group", "the MBP group".
    Whether that name is the arm's is not checked here (a drug both arms were given is a class member too); the
    reader's arms then hold it on both sides. A misspelt word is first read as the article spells it
    (:func:`as_spelled`)."""
    exposure = as_spelled(exposure, text)
    article = terms(text, folded=True)
    phrase = part_core(exposure)
    initials = _initials(phrase).upper()
    flat = terms(phrase.replace("-", " ")) - HOW_GIVEN
    others = [*class_members(phrase, text), *LAY_SYNONYMS.get(" ".join(phrase.lower().split()), ()),
              *_lay_names(terms(phrase) - HOW_GIVEN or terms(phrase)),
              *([initials] if len(initials) >= 3 and re.search(rf"\b{initials}\b", text) else []),
              *_longer_names(flat, text)]
    if terms(exposure, folded=True) <= article:
        other = next((name for name in others if (words := terms(name, folded=True)) and words <= article
                      and not words <= terms(exposure, folded=True)), None)
        return f"{exposure} {other}" if other else exposure
    kept = " ".join(word for word in exposure.split()
                    if terms(word, folded=True) <= article or not terms(word) <= HOW_GIVEN | MODIFIERS)
    if terms(kept, folded=True) and terms(kept, folded=True) <= article:
        return kept
    short_forms = [short for short, long in abbreviations(text).items()
                   if (spelled := terms(long.replace("-", " ")) - HOW_GIVEN) and spelled <= flat <= spelled | MODIFIERS]
    whole = [*others, *short_forms]
    return next((name for name in whole if terms(name, folded=True) and terms(name, folded=True) <= article), exposure)


def _longer_names(flat: frozenset[str], text: str) -> list[str]:
    """The short forms ``text`` defines for a longer name that holds every one of ``flat``'s words (two or more: the
    exposure less how it is given): "DSG" for "diclofenac gel" where the article defines "Diclofenac Sodium Topical
    Gel (DSG)" and its results speak of "DSG 1%". One word alone ("insulin") is held by the long forms of names
    that are not it ("insulin glargine (IG)") and is never read this way (even where the article writes it only in
    that longer name: measured, docs/architecture/studies-measured.md)."""
    if len(flat) < 2:
        return []
    return [short for short, long in abbreviations(text).items() if flat < terms(long.replace("-", " "))]


def article_outcome(outcome: str, text: str) -> str:
    """The question's outcome as the article ``text`` names it, for the study reader: unchanged when the article
    holds all its words; else with a measure's name written as the article writes it
    (:func:`~synthesist.reading.synonyms.measure_names`: "HbA1c" asked, "A1C" written); else unchanged. A misspelt
    word is first read as the article spells it (:func:`as_spelled`)."""
    outcome = as_spelled(outcome, text)
    if terms(outcome, folded=True) <= terms(text, folded=True):
        return outcome
    held = terms(text, folded=True)
    return next((other for other in measure_names(outcome) if terms(other, folded=True) <= held), outcome)


def class_members(exposure: str, text: str) -> list[str]:
    """The members of a drug class the exposure names that ``text`` names ("hydrocortisone" for corticosteroids:
    :data:`~synthesist.reading.entities.DRUG_CLASSES`)."""
    lowered = " ".join(w.rstrip("s") for w in exposure.lower().replace("-", " ").split())
    endings = [e for name, ends in DRUG_CLASSES.items() if name.replace("-", " ") in lowered for e in ends]
    if not endings:
        return []
    found = (word.lower() for word in re.findall(r"[A-Za-z][A-Za-z-]{3,}", text))
    return list(dict.fromkeys(w for w in found if any(_member(w, e) for e in endings)
                              and w not in NOT_DRUGS and len(w) > len(min(endings, key=len)) + 2))


def _member(word: str, ending: str) -> bool:
    """``word`` (or one part of a hyphenated name: "amoxicillin-clavulanate") ends with ``ending``, or begins with
    it when it is marked as a beginning ("cef-")."""
    parts = word.split("-")
    if ending.endswith("-"):
        return any(part.startswith(ending[:-1]) for part in parts)
    return any(part.endswith(ending) or part == ending for part in parts)


def distinctive(exposure: str) -> frozenset[str]:
    """The exposure's words that tell it from others: its core without how it is given, its modifiers and the head
    nouns exposures share ("hormone" of "postmenopausal hormone replacement therapy"). A study that holds them all
    is about the exposure, and a clause of it may name the exposure by any one of them."""
    words = terms(part_core(exposure))
    return words - HOW_GIVEN - MODIFIERS - _HEADS or words - HOW_GIVEN or words


def spelled_out(text: str) -> Callable[[str], str]:
    """A function that writes each short form ``text`` defines out after itself in a quote ("CHG bathing" →
    "CHG chlorhexidine gluconate bathing"), so that a clause naming the exposure or the outcome by its short form
    names it by its words."""
    defined = {short: long for short, long in abbreviations(text).items() if len(short) >= 2}
    if not defined:
        return lambda quote: quote
    pattern = re.compile(rf"\b({'|'.join(re.escape(short) for short in sorted(defined, key=len, reverse=True))})s?\b",
                         re.IGNORECASE)
    return lambda quote: pattern.sub(
        lambda m: m.group(0) if m.group(1).islower() else f"{m.group(0)} {defined[m.group(1).lower()]}", quote)


_MEASURES = tuple(lexicon.pattern("record", f"MEASURE_{kind}") for kind in ("RISK", "DEATH", "RECURRENCE"))
"""Ways of measuring an outcome that are not one another: a trial of breast-cancer survival reports nothing on the
risk of breast cancer, though it names breast cancer throughout."""
_RISK_STATED = lexicon.pattern("record", "MEASURE_RISK_STATED")
"""How a passage alone states a risk: a rate, a proportion, events occurring in the arms."""


def measured_as_asked(outcome: str, quote: str, text: str) -> bool:
    """Whether ``quote`` measures ``outcome`` the way it is named (its risk, death or survival, recurrence:
    :data:`_MEASURES`), read with the short forms ``text`` defines written out: "Median OS was 41.9 months"
    measures overall survival."""
    asked = [measure for measure in _MEASURES if measure.search(outcome)]
    stated = [*asked, _RISK_STATED] if _MEASURES[0] in asked else asked  # a rate states a risk, never asks one
    if not asked or any(measure.search(quote) for measure in stated):
        return True
    said = spelled_out(text)(quote)  # only when the quote's own words do not say it: this compiles a pattern
    return any(measure.search(said) for measure in stated)


_COUNTED_AS = terms(" ".join((*lexicon.word_list("naming", "MEASURE_WORDS"),
                              *lexicon.word_list("direction", "MEASURED"),
                              *lexicon.word_list("naming", "OUTCOME_GENERIC"))), folded=True)
"""How an outcome is counted or measured, or words trials vary in its name, folded ("score", "level", "rate",
"risk", "events"): not what it is."""
_TIME_POINT = lexicon.pattern("direction", "TIME_POINT")
"""A follow-up time ("at 3 months"): when an outcome is read, not what it is (``lexicons/direction.toml``)."""
_JOINING = r"(?:[\s-]++(?:of|the|and|for|in|on|to|a|an)\b)*+[\s-]++"
"""What may stand between the words of a short form's long form: "National Institutes of Health Stroke Scale"
(possessive: no backtracking over a run of hyphens)."""
_STEM = 5
"""The letters two words of one stem share ("infect" of "infection" and "infected", "readm" of "readmission" and
"re-admission"), as :func:`names_outcome` reads them."""


def names_outcome(outcome: str, text: str) -> bool:
    """Whether the article ``text`` names the outcome ``outcome`` anywhere: a word of what it is (its folded words
    less its follow-up time, its numbers and those words that only say how it is counted or measured, or that
    trials vary, :data:`_COUNTED_AS`: "NIHSS" of "NIHSS scores at 3 months"), the same word otherwise spelt or
    ended (hyphens dropped, its first :data:`_STEM` letters: "re-admission", "infected"), a word of another of its names
    (:func:`~synthesist.reading.synonyms.other_names`: "A1C" for HbA1c, "death" for mortality), or a short form of
    the question's written out ("National Institutes of Health Stroke Scale" for NIHSS, three letters or more). An
    article that names none measured something else: its "score of MMSE" is no reading of "NIHSS scores"
    (``bench/data/folder_questions_dev.jsonl``, row 289). True where the outcome is all such words ("score"), which
    leaves nothing to look for. Each of the 1,890 train and 230 validation prompts of Evidence Inference is named so
    in its own article; of the 7,930 prompts of the unlabelled trials, 6 are not ("Baseline characteristics", "Sense
    of Value", "Heart rate" where the article writes "HR", "Getting a score of 0 after 8 days"; 2026-12-07). Golden:
    ``tests/data/outcome_named.jsonl``. Not read: a verb of another stem ("died" for mortality) or a short form the
    article never defines ("SBP" for blood pressure)."""
    phrase = _TIME_POINT.sub(" ", outcome)
    core = {word for word in terms(phrase, folded=True) - _COUNTED_AS if not re.fullmatch(r"[\d.,]+", word)}
    if not core:
        return True
    held = terms(text, folded=True)
    if core & held or _stems(phrase, core) & _stems(text):
        return True
    others = other_names(terms(outcome, folded=True))
    if any(words <= held and stands_for & core for words, stands_for in others.items()):
        return True
    shorts = [letters for token in re.findall(r"[\w-]*[A-Z][\w-]*[A-Z][\w-]*", phrase)
              if terms(token, folded=True) & core and len(letters := [c for c in token if c.isalpha()]) >= 3]
    return any(re.search(r"\b" + _JOINING.join(rf"{re.escape(c)}[\w']*+" for c in letters), text, re.IGNORECASE)
               for letters in shorts)


def _stems(text: str, among: set[str] | None = None) -> set[str]:
    """The first :data:`_STEM` letters of each word of ``text`` of at least that many, lower-cased, hyphens dropped
    ("wellb" of "Well-being"); with ``among``, of those words whose folded terms hold one of these."""
    return {joined[:_STEM] for word in re.findall(r"[\w-]+", text)
            if len(joined := word.lower().replace("-", "")) >= _STEM
            and (among is None or terms(word, folded=True) & among)}


def outcome_names(outcome: str, text: str) -> list[tuple[frozenset[str], frozenset[str]]]:
    """The ways a study may name the question's outcome, each as (its words, its head — the word a clause must
    name: "mortality" of "lung cancer mortality", so "lung cancers were more often stage I" names no mortality):
    the outcome's words (:func:`outcome_words`), the other word trials use ("death" for "mortality"), and a short
    form the article defines for it ("necrotising enterocolitis (NEC)")."""
    phrase = outcome_words(outcome)
    other = with_synonyms(phrase)
    names = [(terms(phrase), _head(phrase)), (terms(other), _head(other))]
    words = terms(phrase)
    for short, long in abbreviations(text).items():
        if words - MEASURE_WORDS and words - MEASURE_WORDS <= terms(long):
            short_form = terms(short) or frozenset({short})
            names.append((short_form, short_form))
    return list(dict.fromkeys(names))


def _head(phrase: str) -> frozenset[str]:
    """An outcome's head: its last word that is not only how it is counted ("delivery" of "caesarean delivery
    rate")."""
    for word in reversed(phrase.split()):
        if (found := terms(word)) and not found <= MEASURE_WORDS:
            return found
    return frozenset()


def with_synonyms(phrase: str) -> str:
    """``phrase`` with each word studies also say another way swapped (:data:`SYNONYMS`: "cardiovascular death" →
    "cardiovascular mortality")."""
    return " ".join(SYNONYMS.get(word.lower(), word) for word in phrase.split())


def outcome_words(outcome: str) -> str:
    """The outcome as a study may word it: its core without the words trials vary ("major cardiovascular events" →
    "cardiovascular"), or its core when that is all it has."""
    core = part_core(outcome, outcome=True)
    kept = " ".join(w for w in core.split() if not terms(w) <= _OUTCOME_GENERIC)
    return kept if terms(kept) else core


def names_comparison(quote: str, query: DirectionQuery, name: str | None = None,
                     exposure: frozenset[str] | None = None, *, partial: bool = False, whole: bool = False,
                     outcomes: Sequence[tuple[frozenset[str], frozenset[str]]] = ()) -> bool:
    """One clause of ``quote`` (:data:`_CLAUSES`) names the comparison (module docstring): the exposure by
    ``exposure`` (default: the query's core words) and the query's outcome. A sentence about another factor of
    the same study, or a clause about one factor next to a clause about another, is no finding on the question."""
    name = name or part_core(query.intervention)
    if exposure is None:
        exposure = terms(name) - HOW_GIVEN or terms(name)
    named = outcomes or [(terms(outcome_words(query.outcome)), _head(outcome_words(query.outcome)))]
    return bool(exposure) and any(_clause_names(clause, name, exposure, outcome, partial, whole, head)
                                  for clause in _split_clauses(quote) for outcome, head in named)


def _split_clauses(quote: str) -> list[str]:
    """``quote`` cut at :data:`_CLAUSES`, never inside brackets ("(2.3% vs 2.1%; P = .71)" stays whole)."""
    return split_clauses(quote, _CLAUSES)


def _clause_names(clause: str, intervention: str, exposure: frozenset[str], outcome: frozenset[str],
                  partial: bool = False, whole: bool = False, head: frozenset[str] = frozenset()) -> bool:
    factor = _factor(clause, intervention, exposure, partial, whole)
    if factor is None:
        return False
    words = terms(_without_covariates(clause, exposure))
    words |= {m.group(1) for w in words if (m := _LETTER_NUMBER.match(w))}  # "vitamin D3" names vitamin D
    outcome = outcome - exposure  # "blood loss" for "blood pressure": "blood" names the exposure, not the outcome
    specific = outcome - MEASURE_WORDS or outcome  # "risk" in "relative risk" names no "risk of lung cancer"
    specific = specific - _OUTCOME_QUALIFIERS or specific  # "delirium" names postoperative delirium
    named = frozenset(w for w in specific if any(same_word(w, said_word) for said_word in words))
    heads = head - exposure
    if heads and not any(same_word(h, w) for h in heads for w in words):
        return False  # "lung cancers were more often stage I-II" names no lung cancer mortality
    if not named or len(named) * 2 <= len(specific) and len(specific) > 1:  # "functional decline" is no cognitive
        return False  # decline, "all-cause mortality" no lung cancer mortality
    if _other_kind(clause, outcome, head):
        return False  # "term preeclampsia" for preterm preeclampsia
    first = re.escape(intervention.split()[0])
    if re.search(rf"\b(?:risk (?:of|for)|incident|incidence of|development of|odds of|rates? of|proportions? of|"
                 rf"numbers? of|likelihood of)\s+(?:\w+\s+){{0,2}}?{first}", clause, re.IGNORECASE):
        return False
    link = LINK.search(clause)
    if link is not None:
        subject = terms(clause[:link.start()])
        if not (subject & exposure or subject & outcome):
            return False
    for joint in filter(None, (link, _FACTORS.search(clause))):
        subject, linked = clause[:joint.start()], terms(clause[joint.end():])
        if not named & linked and listed_together(subject, factor, named):  # two factors of one list
            return False
    return (_subject_of(link, clause, factor) or compared(clause, factor)) and not only_a_group(clause, named)


def _factor(clause: str, intervention: str, exposure: frozenset[str], partial: bool, whole: bool
            ) -> frozenset[str] | None:
    """The exposure's words as the clause words them, or None when it names too little of the exposure (``whole``:
    another name, named whole; ``partial``: any distinctive word), or another form, a combination, two kinds or
    another kind of it."""
    said = terms(_without_covariates(clause, exposure))
    words = said | {m.group(1) for w in said if (m := _LETTER_NUMBER.match(w))}
    matched = {e for e in exposure if any(same_word(e, w) for w in words)}
    factor = frozenset(w for w in said if any(same_word(e, w) for e in exposure))
    if whole:  # another name ("treatment group", "TXA") is named whole
        too_little = matched != exposure
    elif partial:
        too_little = not matched - MODIFIERS - _HEADS
    else:
        too_little = len(matched) < math.ceil(len(exposure) / 2) or not matched - MODIFIERS
    if (too_little or _another_form(intervention, clause) or _combined(clause, factor) or _within(clause, factor)
            or _another_kind(clause, intervention, exposure)):
        return None
    return factor


def same_word(asked: str, said: str) -> bool:
    """Two stems of one word: equal, a plural ("PPIs" for PPI, stems "ppis"/"ppi"), another form of a condition
    ("psychotic" for psychosis: :data:`_MORPH`), one a stem of the other by a short ending ("neurodevelopmental"
    for neurodevelopment), British and American spellings alike ("necrotising"/"necrotizing", "anaemia"/"anemia",
    "tumour"/"tumor")."""
    asked, said = _spelled(asked), _spelled(said)
    if asked == said or _MORPH.sub("ot", asked) == _MORPH.sub("ot", said):
        return True
    short, long = sorted((asked, said), key=len)
    return len(short) >= 4 and long.startswith(short) and len(long) - len(short) <= 3 and short.isalpha()


def _other_kind(clause: str, outcome: frozenset[str], head: frozenset[str]) -> bool:
    """The clause names the outcome's head with another kind than the one asked ("no difference in *term*
    preeclampsia" when preterm preeclampsia is asked, "*mild* delirium" for severe delirium)."""
    if not outcome & _KINDS:  # "complications" asked: a severe one is one of them
        return False
    tokens = re.findall(r"[\w'-]+", clause.lower())
    for before, word in zip(tokens, tokens[1:], strict=False):
        kind = terms(before)
        if terms(word) & head and kind <= _KINDS and kind and not kind & outcome:
            return True
    return False


def _spelled(stem: str) -> str:
    """A stem with British and American spellings folded together (``ae``/``oe`` → ``e``, ``z`` → ``s``, ``our`` →
    ``or``)."""
    return stem.replace("ae", "e").replace("oe", "e").replace("z", "s").replace("our", "or")


def _subject_of(link: re.Match[str] | None, clause: str, factor: frozenset[str]) -> bool:
    """The factor is what the association is of: it stands at most six words before "associated with", no comma
    between ("current smoking at the index date was associated with …")."""
    if link is None:
        return False
    before = re.findall(r"[\w'-]+|,", clause[:link.start()])[-7:]
    last = max((i for i, word in enumerate(before) if terms(word) & factor), default=None)
    return last is not None and "," not in before[last:]


def _another_kind(clause: str, intervention: str, exposure: frozenset[str]) -> bool:
    """The clause names part of the exposure with another word where the rest of it stands: "*cardiac* surgery" for
    bariatric surgery, "*paternal* smoking" for maternal smoking, "vitamin *C*" for vitamin D, "*high-dose* aspirin"
    for low-dose aspirin. A neighbour that says how, when or in whom ("*current* smoking", "the epidural *group*",
    "statin *use*", "aspirin *100 mg*") is no other kind."""
    phrase = [word.lower() for word in re.findall(r"[\w'-]+", intervention)
              if terms(word) and not terms(word) <= HOW_GIVEN]
    tokens = [token.lower() for token in re.findall(r"[\w'-]+", clause)]

    def same(token: str, word: str) -> bool:
        return token == word or terms(token) == terms(word)

    def other(index: int, missing: str) -> bool:
        if not 0 <= index < len(tokens) or tokens[index][0].isdigit() or not terms(tokens[index]):
            return False
        token = tokens[index]
        if any(same(token, word) for word in phrase) or terms(token) <= _NEIGHBOURS:
            return False
        if terms(missing) & MODIFIERS:  # a modifier's place: only another modifier is another kind ("high-dose")
            return bool(terms(token) & MODIFIERS)
        return not terms(token) & MODIFIERS  # a word's place: any other word but a modifier ("current" smoking)

    for first, second in zip(phrase, phrase[1:], strict=False):
        has_first = any(same(token, first) for token in tokens)
        has_second = any(same(token, second) for token in tokens)
        for i, token in enumerate(tokens):
            if same(token, second) and not has_first and other(i - 1, first):
                return True
            if same(token, first) and not has_second and other(i + 1, second):
                return True
    return False


def _within(clause: str, factor: frozenset[str]) -> bool:
    """The clause compares two kinds of the exposure ("did not differ *between annual and biennial* screening",
    "21.4% among patients receiving *high-titre plasma* and 28.1% among those receiving *low-titre plasma*": two
    different words of kind before it), not the exposure with its absence."""
    for match in _BETWEEN_KINDS.finditer(clause):
        if terms(match.group("tail")) & factor:
            return True
    tokens = re.findall(r"[\w'-]+", clause.lower())
    kinds = {tokens[i - 1] for i, token in enumerate(tokens)
             if i and terms(token) & factor and _KIND_OF.match(tokens[i - 1])}
    return len(kinds) >= 2


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
