"""The question's frame: population, exposure, comparator, outcomes and the kind of question.

A frame is what an answer must address. "Does metformin lower cancer incidence in type 2 diabetes?" asks about an
exposure (metformin), an outcome (cancer incidence) in a population (type 2 diabetes): an abstract on metformin and
glycaemic control in type 2 diabetes shares two of the three and still does not answer it.

The kind of question, and whether it asks for a yes or a no, are read by rule. The parts of a one-clause yes/no
effect or association question come from the question tagger (:mod:`.question_parts`, a model trained on questions
phrased from clinicians' prompts) when it is sure of both the intervention and the outcome; otherwise, and for every
other kind of question, the parse is by rule over the question's words: the relation verb ("lower", "predict",
"associated with") splits the exposure (before it) from the outcome (after it); a phrase introduced by
*in/among/for* that names people or a condition is the population; *versus/compared with/than/alternative to* open
the comparator. Questions that are not shaped "does X do Y" fall back gracefully: "X and Y" and "X: …?" split at the
conjunction or the colon; a comparison typed with no verb ("metformin vs placebo HbA1c") is the tagger's to
read (:func:`typed`); a question with a subject but no outcome ("Is X effective in the treatment of Z?") takes
the condition it is asked about as the outcome; a descriptive question ("cardiomegaly causes", "What are the causes
of X?") has a subject and the aspect asked about. The LLM fills the same model through an output tool
(:mod:`synthesist.agents.frame_check` validates it); :func:`frame_of` is the extractive engine's.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..models import QuestionFrame
from . import lexicon
from .entities import is_condition_word
from .question import DROPPED, is_yes_no, opens_yes_no, question_terms, typed_comparison
from .question_parts import Part, question_parts, question_tagger
from .text import STOP_WORDS

_I = re.IGNORECASE
MECHANISM = lexicon.pattern("frame", "MECHANISM")
VERB_QUESTION = lexicon.pattern("frame", "VERB_QUESTION")
PREVALENCE = lexicon.pattern("frame", "PREVALENCE")
DESCRIPTIVE = lexicon.pattern("frame", "DESCRIPTIVE")
DIAGNOSTIC = lexicon.pattern("frame", "DIAGNOSTIC")
PROGNOSIS = lexicon.pattern("frame", "PROGNOSIS")
ASSOCIATION = lexicon.pattern("frame", "ASSOCIATION")

_GERUND = re.compile(lexicon.source("frame", "GERUNDS") + r"\b", _I)
"""A gerund that is the relation after an evaluative predicate ("useful in *improving* depression")."""
RELATION = lexicon.pattern("frame", "RELATION")
"""The relation verb or phrase that splits the exposure (before it) from the outcome (after it): "lower", "predict",
"associated with", "effective in reducing" (``reading/lexicons/frame.toml``)."""
COMPARATOR = lexicon.pattern("frame", "COMPARATOR")
OVER_A_TIME = lexicon.pattern("frame", "OVER_A_TIME")
"""A time after "over" (``lexicons/frame.toml``): the clause ends there, with no comparator."""
POPULATION = re.compile(r"\b(?:in|among|for)\s+(?=(?P<rest>[^,;:?]+))", _I)
PEOPLE = lexicon.pattern("frame", "PEOPLE")
ASPECTS = lexicon.pairs("frame", "ASPECTS")
_LEADING = lexicon.pattern("frame", "LEADING")
NEGATIONS = lexicon.words("frame", "NEGATIONS")
NAME_ENDS = lexicon.words("frame", "NAME_ENDS")
"""Words kept at the start of a part, where function words are trimmed: they negate it ("no exercise")."""


SIZE = lexicon.pattern("frame", "SIZE")
"""A question that asks for the size of an effect ("How much does metformin lower HbA1c?"): read as the yes/no
question it contains, but asking for a number, not a yes or a no."""
EFFECT_OF = lexicon.pattern("frame", "EFFECT_OF")
"""An effect asked for by name ("What is the effect of statins on mortality in older adults?"): the exposure is
what has the effect, the outcome what it is on; it asks for the effect, so no yes or no."""
SAFETY = lexicon.pattern("frame", "SAFETY")
_SAFE_USE = lexicon.pattern("frame", "SAFE_USE")
_SCHEDULE = lexicon.pattern("frame", "SCHEDULE")
PROPERTIES: dict[str, dict[str, str]] = {
    name: {said: side for side, vocabulary in (("increase", "COMPARED_MORE"), ("decrease", "COMPARED_LESS"))
           for said in lexicon.pairs("frame", vocabulary).get(name, ())}
    for name in lexicon.pairs("frame", "COMPARED_MORE").keys() | lexicon.pairs("frame", "COMPARED_LESS").keys()}
"""Each outcome :func:`_compared_property` reads from a comparative ("pain", "strength", "cost"), with the
comparatives that name it and the change each asks ("less painful": decrease; ``lexicons/frame.toml`` COMPARED_MORE
and COMPARED_LESS)."""
_PROPERTIES = tuple((name, re.compile(rf"\b({'|'.join(map(re.escape, sorted(said, key=len, reverse=True)))})\s+than\b",
                                      re.IGNORECASE)) for name, said in sorted(PROPERTIES.items()))
"""Each property, with its comparatives before "than"."""
HARMS = "adverse events"
"""The outcome of a question about harms alone (:data:`SAFETY`: "Is X safe in P?"): the name trials give their count
of harms; the study reader also reads the other names trials write for it ("side effects", "TEAEs":
``lexicons/synonyms.toml`` MEASURE_NAMES)."""


@lru_cache(maxsize=1024)
def frame_of(question: str) -> QuestionFrame:
    """The frame of ``question``: of a one-clause yes/no ``effect`` or ``association`` question, the question
    tagger's parts when it finds an intervention and an outcome both at its threshold (:func:`tagged_frame`), else
    the parse by rule (:func:`frame_by_rule`). A title-style question ("Topic: asking part?") keeps the rules'
    reading of its topic: the tagger learned from one-clause questions. A question whose words outside the names
    the tagger finds (:func:`_unnamed`) hold a verb of effect or association is asked of those names: "Does simple
    DT change visual accuracy compared with complex DT?" asks about an effect on an outcome named "visual accuracy",
    not about a test's accuracy; "Is CT accurate for diagnosing appendicitis?" keeps its reading by rule. A
    comparison typed with no verb (:func:`typed`) is the tagger's, title-style or not. Kept for
    the last 1,024 questions: a frame is immutable, and a run's agents ask for it each round."""
    text = " ".join(question.replace("\u2019", "'").split()).strip()
    frame = frame_by_rule(text)
    if frame.yes_no and frame.kind in ("diagnostic", "prognosis", "mechanism") and (kind := _verb_kind(text, frame)):
        frame = frame.model_copy(update={"kind": kind})
    if frame.yes_no and frame.kind in ("effect", "association") and typed(text):
        # the rules split a question at its verb: a typed one has none, and its parts are the tagger's at any
        # confidence ("metformin vs placebo HbA1c in type 2 diabetes?" gave the comparator "placebo HbA1c")
        return _compared_property(text, tagged_frame(text, frame.model_copy(update={"outcomes": ()}), as_typed=True)
                                  or frame)
    if _main_clause(text)[1]:
        return frame
    if frame.yes_no and frame.kind in ("effect", "association"):
        return _compared_property(text, _about_harms(text, tagged_frame(text, frame) or frame))
    if is_yes_no(text) and frame.kind in ("diagnostic", "prognosis", "mechanism"):
        unnamed = _unnamed(text, frame)
        kind = question_kind(unnamed)
        if kind in ("effect", "association") and RELATION.search(unnamed):
            asked = frame.model_copy(update={"kind": kind, "yes_no": True})
            return tagged_frame(text, asked) or asked
    return frame


_FUNCTION_WORD = "(?:" + "|".join(re.escape(word) for word in sorted(STOP_WORDS - NEGATIONS)) + ")"
"""A function word the tagger's parts are trimmed of (:func:`_trimmed`: "very" of "very low birth weight babies"),
which may stand between a preposition and the part as the question writes it."""


def typed(question: str) -> bool:
    """Whether ``question`` is a comparison typed as a search with no verb of its own
    (:func:`~.question.typed_comparison`, and no relation verb, :data:`RELATION`: "Metformin lowers HbA1c compared
    with placebo" is read by the rules): "tofacitinib ACR20 response vs placebo in rheumatoid arthritis",
    "sterile water injections vs saline - back pain relief?". The question tagger learned such questions
    (``bench/train_question_tagger.py`` TYPED_TEMPLATES); the rules, which split a question at its verb, cannot
    read them."""
    return typed_comparison(question) and RELATION.search(question) is None


def _qualifies(predicate: re.Match[str], exposure: str, text: str) -> bool:
    """Whether the safety word ``predicate`` stands right before ``exposure`` in ``text``: a word of its name ("Are
    safe drinking water interventions effective …?"), not the question's predicate."""
    return re.match(rf"\s+{re.escape(exposure)}\b", text[predicate.end():], _I) is not None


def _about_harms(text: str, frame: QuestionFrame) -> QuestionFrame:
    """``frame`` asking about adverse events (:data:`HARMS`) where ``text`` asks about harms alone (:data:`SAFETY`)
    and the outcome read is the condition it is used for, not something asked about: "Is moist exposed burn
    ointment safe for pressure ulcers?" (or "safe to use on …") asks whether the ointment harms people with pressure
    ulcers, and "Is apixaban safer than warfarin for preventing stroke in atrial fibrillation?" whether it harms
    less; the condition becomes the population where the question names none ("… as safe as clinically indicated
    CPAP for very low birth weight babies?", the outcome read without "very"). A question that names what it asks
    about keeps it ("Does X safely reduce pain?"), and so does one about benefit as well ("safe and effective":
    :data:`SAFETY`)."""
    outcome = frame.outcomes[0] if frame.outcomes else ""
    if frame.kind != "effect" or outcome == HARMS or (asked := SAFETY.search(text)) is None:
        return frame
    exposure = frame.exposure or ""
    inside = SAFETY.search(exposure)
    if inside is not None and _content(exposure[inside.end():]):
        return frame  # "Are safe drinking water interventions effective …?": a word of the exposure's name
    if exposure and _qualifies(asked, exposure, text):
        # the same, where the tagger left the word out of the name it stands before
        return frame.model_copy(update={"exposure": f"{asked.group(0)} {exposure}"})
    used_for = re.compile(r"\b(?:for|in|among|with|to|used?\s+on)\s+(?:the\s+)?"
                          r"(?:(?:treatment|management|prevention) of\s+|(?:treating|preventing|managing)\s+)?"
                          rf"(?:{_FUNCTION_WORD}\s+)*{re.escape(outcome)}", _I)
    if outcome and not used_for.search(text, asked.end()):
        return frame
    if inside is not None:  # "drug A safer", as the tagger may leave it
        exposure = _core(re.sub(r"\s+(?:as|better|more|less)\s*$", "", exposure[:inside.start()], flags=_I))
    population = frame.population or (_population(outcome)[0] or outcome if outcome else None)
    return frame.model_copy(update={"exposure": exposure or frame.exposure, "population": population,
                                    "outcomes": (HARMS,)})


def _compared_property(text: str, frame: QuestionFrame) -> QuestionFrame:
    """``frame`` asking about the property a comparative between its two treatments names, where it names no
    outcome, or only one that holds the comparative (:data:`PROPERTIES`: "Is X less painful than Y?" asks about
    pain, and the rules read "… Aero-Step less painful" as the outcome): the outcome is that
    property, and the treatments the question tagger's, its intervention at its threshold and its comparator and
    population at any confidence, where every word of the question outside them and the comparative is a function
    word. Anything else ("Is X more effective and cheaper than Y?", "Is X, which is cheaper than Y, effective?", "Is
    this less painful than that?") leaves the frame as it is."""
    found = min(((name, match) for name, pattern in _PROPERTIES if (match := pattern.search(text))),
                key=lambda named: named[1].start(), default=None)  # the first in the question
    if frame.kind != "effect" or found is None:
        return frame
    name, said = found
    comparative = said.group(1).lower()
    if any(comparative not in outcome.lower() for outcome in frame.outcomes):
        return frame  # "… less painful than dry needling for neck pain?" names its outcome
    parts, threshold = question_parts(text, hold=False), question_tagger().threshold
    given, against = parts.intervention, parts.comparator
    exposure = _trimmed(given)
    if not exposure or given.confidence < threshold or given.end > said.start() or (
            against is not None and against.start < said.end()):
        return frame
    rest = text
    for start, end in [(said.start(), said.end())] + [(part.start, part.end) for part in (given, against,
                                                                                        parts.population) if part]:
        rest = rest[:start] + " " * (end - start) + rest[end:]
    if any(word.lower() not in STOP_WORDS for word in re.findall(r"[\w'-]+", rest)):
        return frame
    return frame.model_copy(update={"exposure": exposure, "comparator": _trimmed(against) or frame.comparator,
                                    "population": _trimmed(parts.population) or frame.population,
                                    "outcomes": (name,)})


def _verb_kind(text: str, frame: QuestionFrame) -> str | None:
    """The kind a question asks by its verb where it names a comparator, opens with its auxiliary and its verb stands
    right after the exposure the rules read ("Does X change Y compared with Z?"): ``effect`` or ``association``, else
    ``None``. Such a question asks about a comparison, whatever words its outcome or a population after it hold:
    "Does ketamine (100 ng/ml blood plasma level) change accuracy in the timing task compared with placebo?" and
    "Does … (GD) group affect Improvement in GSRS … score - in adults with … no GI diagnoses compared with Placebo
    group?" ask about an effect, not a test's accuracy. Without a comparator the words after the verb may be what is
    asked ("Can ki-67 play a role in prediction of … response …?", "Can X help predict …?")."""
    if not (frame.exposure and frame.comparator and opens_yes_no(text)):
        return None
    at = text.lower().find(frame.exposure.lower())
    verb = RELATION.match(text[at + len(frame.exposure):].lstrip(" ,")) if at >= 0 else None
    kind = question_kind(f"Does it {verb.group(0)} them?") if verb is not None else None
    return kind if kind in ("effect", "association") else None


def _unnamed(text: str, frame: QuestionFrame) -> str:
    """``text`` with the names in it blanked out: the parts the question tagger finds at its threshold, or where it
    does not find both an intervention and an outcome there, what the rules read as compared (``frame``'s exposure
    and comparator): a word of what is given ("systematic assessment", "detection" in an intervention of twenty
    words the tagger does not read; "invasive diagnosis of nosocomial pneumonia") says nothing of what the question
    asks, where an outcome's or a population's may ("the prognosis", "prediction of … response" is what is asked)."""
    parts, threshold = question_parts(text), question_tagger().threshold
    if not (parts.intervention and parts.outcome
            and min(parts.intervention.confidence, parts.outcome.confidence) >= threshold):
        for name in sorted(filter(None, (frame.exposure, frame.comparator)), key=len, reverse=True):
            text = re.sub(re.escape(name), lambda found: " " * len(found.group(0)), text, flags=re.IGNORECASE)
        return text
    for part in (parts.population, parts.intervention, parts.comparator, parts.outcome):
        if part is not None:
            text = text[:part.start] + " " * (part.end - part.start) + text[part.end:]
    return text


def tagged_frame(text: str, frame: QuestionFrame, *, as_typed: bool = False) -> QuestionFrame | None:
    """``frame`` with population, exposure, comparator and outcome from the question tagger
    (:mod:`.question_parts`), or ``None`` when it does not find both an intervention and an outcome at its threshold
    (chosen on held-out generated questions, ``fitted/question_tagger/model.json``). Where ``frame`` (the rules')
    names no outcome, the tagger's parts are taken at any confidence: the rules read a verb they do not know into the
    exposure ("Does stem cell therapy rebuild myocardial function?" has no outcome by rule), and an effect or
    association question with no outcome is no reading at all (``tests/data/question_verbs.jsonl``: 0.777 of the
    dev parts right with the threshold alone, 0.855 with this; the golden parts 251 and 255 of 264). So too, and only
    there, a reading the tagger found by the best path that holds an outcome (:attr:`Parts.held`), where a bare verb
    follows the subject (:data:`VERB_QUESTION`), or, ``as_typed``, in a question :func:`typed` ("metformin vs
    placebo HbA1c", whose best path reads "placebo HbA1c" as the comparator). A question about harms alone
    (:data:`SAFETY`, not a word of the exposure's name) names no outcome: its parts are the tagger's where it finds
    an intervention at its threshold ("Is it safe for pregnant women to take ibuprofen?"), and :func:`_about_harms`
    asks about adverse events."""
    parts, threshold = question_parts(text), question_tagger().threshold
    harms = SAFETY.search(text)
    if (parts.held and harms is not None and frame.kind == "effect"
            and not (frame.exposure and frame.outcomes == (HARMS,))):
        # a question about harms alone names no outcome ("Is it safe for pregnant women to take ibuprofen?"): where
        # the rules read no exposure, or an outcome ("Is exercise training in heart failure patients safe?" gave
        # "heart failure"), its parts are the tagger's best path, and _about_harms asks about adverse events
        unheld = question_parts(text, hold=False)
        exposure = _trimmed(unheld.intervention)
        if (exposure and unheld.intervention.confidence >= threshold and not SAFETY.search(exposure)
                and not _qualifies(harms, exposure, text)):
            return frame.model_copy(update={"population": _trimmed(unheld.population) or None, "exposure": exposure,
                                            "comparator": _trimmed(unheld.comparator) or None, "outcomes": ()})
    exposure, outcome = _trimmed(parts.intervention), _trimmed(parts.outcome)
    if parts.held and not (as_typed or VERB_QUESTION.match(text)):
        return None
    if not exposure or not outcome or ((parts.held or min(parts.intervention.confidence, parts.outcome.confidence)
                                        < threshold) and frame.outcomes):
        return None
    return frame.model_copy(update={"population": _trimmed(parts.population) or None, "exposure": exposure,
                                    "comparator": _trimmed(parts.comparator) or None, "outcomes": (outcome,)})


def _trimmed(part: Part | None) -> str:
    """A tagged part's words without the function words and punctuation at either end ("the risk of falls," →
    "risk of falls"; "total score -" before a population after a dash → "total score"); a last word in capitals is
    a name's letter, never the article or pronoun it spells ("vitamin A", "hepatitis A", "drug A", "type I"); a
    dose's schedule keeps its count ("once a day": :data:`_SCHEDULE`)."""
    words = part.text.split() if part is not None else []
    while (words and (words[0].lower().strip(",.;:?'\"()-–") or "the") in STOP_WORDS - NEGATIONS
           and not _SCHEDULE.match(" ".join(words))):
        words.pop(0)
    while words and (words[-1].lower().strip(",.;:?'\"()-–") or "the") in STOP_WORDS and not (
            len(words) > 1 and words[-1].strip(",.;:?'\"()").isupper()):
        words.pop()
    return " ".join(words).strip(",.;:? ")


def frame_by_rule(question: str) -> QuestionFrame:
    """The frame of ``question``, parsed by rule (see the module docstring). A question that asks for an effect's
    size (:data:`SIZE`, :data:`EFFECT_OF`) is an ``effect`` question that is not yes/no: its answer leads with the
    number."""
    text = " ".join(question.replace("\u2019", "'").split()).strip()
    if (size := SIZE.match(text)) is not None:
        inner = frame_by_rule(size["rest"])
        kind = inner.kind if inner.kind in ("effect", "association") else "effect"
        return inner.model_copy(update={"kind": kind, "yes_no": False})
    if (named := EFFECT_OF.match(text)) is not None:
        population, outcome = _population(named["outcome"])
        comparator, exposure = _comparator(named["exposure"])
        return QuestionFrame(kind="effect", yes_no=False, population=population or None,
                             exposure=_core(exposure) or None, comparator=comparator or None,
                             outcomes=(_core(outcome),) if _core(outcome) else (), source="extractive")
    kind = question_kind(text)
    yes_no = is_yes_no(text) and kind not in ("mechanism", "descriptive", "prevalence")
    clause, topic, pronoun = _main_clause(text)
    if kind in ("descriptive", "prevalence", "mechanism") and not RELATION.search(_strip_aspect(clause)):
        subject, aspect = _subject_and_aspect(clause, kind)
        return QuestionFrame(kind=kind, yes_no=False, exposure=subject or None, outcomes=(aspect,) if aspect else (),
                             population=None, comparator=None, source="extractive")
    if kind == "effect" and (user := _SAFE_FOR.match(clause)) is not None:  # "it safe for P to take X"
        population, clause = _phrase(user["people"]), f"{user['exposure']} {user['predicate']}"
    else:
        population, clause = _population(clause)
    comparator, clause = _comparator(clause)
    exposure, outcome = _split(clause)
    if kind == "effect" and (harmed := _harmed(clause, outcome)) is not None:
        exposure, outcome = harmed[0], HARMS  # "Is X safe in P?" asks about X's harms in P, not about P
        population, comparator = population or harmed[1], comparator or harmed[2]
    if not outcome and population and population != exposure:
        # "Is X effective in the treatment of Z?": the condition Z is what X is asked about
        conditions = question_terms(population).conditions
        if conditions or not PEOPLE.search(population):
            outcome = conditions[0] if conditions else population
    if topic:  # a topic that names an outcome gives it, where the asking part asks only whether it is safe
        harms = outcome == HARMS
        exposure, outcome, population, comparator = _with_topic(topic, exposure, "" if harms else outcome,
                                                                population, comparator, pronoun)
        outcome = outcome or (HARMS if harms else "")
    if not exposure and outcome and outcome != HARMS:
        exposure, outcome = outcome, ""
    exposure, outcome = _core(exposure), _core(outcome)
    if kind == "mechanism" and not outcome:
        outcome = "mechanism"
    return QuestionFrame(kind=kind, yes_no=yes_no, population=population or None, exposure=exposure or None,
                         comparator=comparator or None, outcomes=(outcome,) if outcome else (), source="extractive")


_SAFE_FOR = re.compile(r"^(?:(?:it|this|that)\s+)?(?P<predicate>safe|safer|well[- ]tolerated)\s+for\s+"
                       r"(?P<people>.+?)\s+to\s+(?:take|use|receive|get|undergo|have|start|continue|be\s+given)\s+"
                       r"(?P<exposure>.+)$", _I)
"""A clause that names the people before the use ("it safe for elderly patients to take benzodiazepines"): the
exposure is what they take."""


def _harmed(clause: str, outcome: str) -> tuple[str, str, str] | None:
    """The exposure, the population and the comparator of a clause that asks about harms alone (:data:`SAFETY`),
    None when it asks no such thing. Where the clause opens with its predicate ("it safe to use X during
    pregnancy"), what follows it, up to a preposition that names the people or the time of use; else, where the
    rules read no outcome, its words before the predicate ("X" of "X safe", "X be used safely"; '' where it names
    none of its own: "it safe", after a title-style topic), and what "as safe as" sets it against."""
    if (use := _SAFE_USE.match(clause)) is not None:
        # "give X to P": a verb of giving names the people after "to"
        to = r"|to" if re.search(r"\b(?:give|prescribe|administer)\s+$", use.group(0), _I) else ""
        exposure, *population = re.split(rf"\s+(?:during|in|among|for|with{to})\s+", clause[use.end():], maxsplit=1,
                                         flags=_I)
        return _core(exposure), _phrase(population[0] if population else ""), ""
    if outcome or (predicate := SAFETY.search(clause)) is None:
        return None
    alike = re.search(r"\bas\s*$", clause[:predicate.start()], flags=_I)  # "as safe as C"
    before = re.sub(r"\s+(?:as|be|been|being)(?:\s+(?:used|given|taken|administered|performed|done))?\s*$", "",
                    clause[:predicate.start()], flags=_I)
    against = re.match(r"\s+as\s+(?P<rest>.+)", clause[predicate.end():], flags=_I) if alike else None
    return (_core(before) if _content(before) else ""), "", _phrase(against["rest"]) if against else ""


def question_kind(question: str) -> str:
    """The kind of question: ``mechanism`` (how / by what mechanism), ``prevalence``, ``descriptive`` (what
    causes / what are …, or a bare topic with an aspect), ``diagnostic``, ``prognosis``, ``association``, else
    ``effect`` (does X change Y)."""
    if MECHANISM.search(question):
        return "mechanism"
    yes_no = is_yes_no(question)
    if PREVALENCE.search(question) and not yes_no:
        return "prevalence"
    if not yes_no and DESCRIPTIVE.search(question.strip()):
        return "descriptive"
    if not yes_no and not ASSOCIATION.search(question) and not RELATION.search(question):
        return "association" if re.search(r"\s(?:and|with|on)\s", question) else "descriptive"
    if DIAGNOSTIC.search(question):
        return "diagnostic"
    if PROGNOSIS.search(question):
        return "prognosis"
    if ASSOCIATION.search(question):
        return "association"
    return "effect"


def _main_clause(text: str) -> tuple[str, str, bool]:
    """The part of the question that asks, the title-style topic before it if any ("Neck pain treatment with
    acupuncture: does the number of needles matter?"), and whether the asking part points back to the topic with a
    pronoun ("… : is it feasible?"); the topic is the frame's fallback then, or when the asking part names nothing
    specific."""
    held = _held_separators(text.rstrip("?. "))
    parts = [p.strip() for p in re.split(r":\s+|\s+-{1,2}\s*|\?\s+|\.\s+(?![a-z])", held) if p.strip()]
    parts = [p.replace(_COLON, ":").replace(_DASH, "-") for p in parts]
    asking = [p for p in parts if _ASKING.match(p)]
    clause = asking[-1] if asking else parts[-1] if parts else text
    topic = " ".join(p for p in parts if p != clause and not _ASKING.match(p)) if len(parts) > 1 else ""
    pronoun = bool(topic) and bool(re.search(r"\b(?:it|they|this|these|them|we|its|their)\b", clause, _I))
    return _LEADING.sub("", clause.strip() + " ").strip(), topic, pronoun


_ASKING = lexicon.pattern("frame", "ASKING")
_COLON, _DASH = "\u0000", "\u0001"


def _held_separators(text: str) -> str:
    """``text`` with the colons and dashes inside its asking part held (as :data:`_COLON` and :data:`_DASH`): a
    question that starts asking ("Does Group A: two lag screws change …?", "Does intravenous cyclophosphamide -
    Group 1 affect …?") has no title-style topic before it, so a colon or dash after its first words is part of a
    name; only a question mark or a full stop ends it there."""
    if not _ASKING.match(text):
        return text
    end = re.search(r"\?\s+|\.\s+(?![a-z])", text)
    head = text[:end.start()] if end else text
    head = re.sub(r"\s+(-{1,2})\s*", lambda dash: dash.group(0).replace("-", _DASH), head.replace(":", _COLON))
    return head + (text[end.start():] if end else "")


GENERIC = lexicon.words("frame", "GENERIC")
"""Evaluative and function words that name no subject ("worth the effort", "room for improvement", "an
underrecognised association"): an asking part made mostly of them names nothing of its own, and the question's
title-style topic gives its frame (``reading/lexicons/frame.toml``)."""


def _with_topic(topic: str, exposure: str, outcome: str, population: str, comparator: str,
                pronoun: bool) -> tuple[str, str, str, str]:
    """The frame of a title-style question ("Topic: asking part?"): the topic gives exposure and outcome when the asking
    part names nothing of its own, the outcome when it names one thing, only population and comparator when it names
    two (docs/architecture/contracts.md, "The question frame and the alignment gate")."""
    topic_population, rest = _population(topic)
    topic_comparator, rest = _comparator(rest)
    topic_exposure, topic_outcome = _split(rest)
    population, comparator = population or topic_population, comparator or topic_comparator
    if pronoun or _weak(exposure):  # "Double balloon enteroscopy: is it safe in a community setting?"
        asked = outcome or exposure  # "… : do they reduce cochlear toxicity?" asks of the topic's subject
        exposure = topic_exposure or exposure
        asked = asked if asked != exposure and not _weak(asked) else ""
        return exposure, topic_outcome or asked, population, comparator
    if not outcome:  # "Attenuation of ovarian damage in rats: does edaravone offer protection?"
        subject = _population(topic)[1]  # the comparator stays: "inpatient versus outpatient care" is the subject
        return _without_generic_tail(exposure), _phrase(subject), population, comparator
    return exposure, outcome, population, comparator


_FRAMING = lexicon.pattern("frame", "FRAMING")
EVALUATIVE = lexicon.words("frame", "EVALUATIVE")
"""Words a question's predicate evaluates its subject with ("Is the INR reliable?", "… helpful and feasible?"):
never part of the subject's name."""


def _core(phrase: str) -> str:
    """A frame term without the study's framing before it ("Validation of the 2009 TNM version" → "2009 TNM
    version", "Systematic use of X" → "X") and the evaluation after it ("minilaparoscopic repair feasible")."""
    cut = _FRAMING.sub("", phrase)
    tokens = (cut if _content(cut) else phrase).split()
    while len(tokens) > 1 and (tokens[-1].lower().strip(".,'") in EVALUATIVE or _dropped(tokens[-1])
                               and not _ends_name(tokens)):
        tokens.pop()
    return _phrase(" ".join(tokens))


def _without_generic_tail(phrase: str) -> str:
    """``phrase`` without the evaluative words it ends on ("volumetric analysis worth the effort" → "volumetric
    analysis")."""
    tokens = phrase.split()
    while len(tokens) > 1 and (_dropped(tokens[-1]) or tokens[-1].lower().strip(".,'") in GENERIC):
        tokens.pop()
    return " ".join(tokens)


def _weak(exposure: str) -> bool:
    words = [w.lower().strip(".,'") for w in _content(exposure)]
    return not words or all(w in GENERIC for w in words) or len([w for w in words if w not in GENERIC]) < len(words) / 2


def _strip_aspect(clause: str) -> str:
    return re.sub(r"\b(?:causes?|mechanisms?|prevalence)\b", "", clause, flags=_I)


def _subject_and_aspect(clause: str, kind: str) -> tuple[str, str]:
    lower = clause.lower()
    aspect = "prevalence" if kind == "prevalence" else "mechanism" if kind == "mechanism" else ""
    for name, cues in ASPECTS.items():
        if not aspect and any(re.search(rf"\b{re.escape(cue)}\b", lower) for cue in cues):
            aspect = name
    subject = re.sub(r"\b(?:the|of|are|is|what|which|main|common|most|usual|known|causes?|cause|etiology|"
                     r"aetiology|risk factors?|symptoms|signs|complications|treatments?|management|prevalence|"
                     r"frequency|proportion|mechanisms?|how common|how many|how often|side[- ]effects|"
                     r"adverse (?:effects|events|reactions)|harms)\b", " ", clause, flags=_I)
    return _phrase(subject), aspect


def _population(clause: str) -> tuple[str, str]:
    """The last *in/among/for/of* phrase naming people or a condition, and the clause without it."""
    relations = [(r.start(), r.end()) for r in RELATION.finditer(clause)]
    for match in reversed(list(POPULATION.finditer(clause))):
        rest = match.group("rest")
        if _GERUND.match(rest) and any(start <= match.start() < end for start, end in relations):
            continue  # "useful in improving depression": the phrase is the relation, not the people
        cut = COMPARATOR.search(rest)
        rest = rest[: cut.start()] if cut else rest
        if RELATION.search(rest):  # "for 6 weeks affect number of patients …" runs across the question's verb
            continue
        words = rest.split()
        if PEOPLE.search(rest) or any(is_condition_word(w.strip(".,")) for w in words):
            if match.start() == 0:
                continue
            return _phrase(rest), clause[: match.start()] + clause[match.start("rest") + len(rest):]
    return "", clause


def _comparator(clause: str) -> tuple[str, str]:
    match = COMPARATOR.search(clause)
    if match is None:
        return "", clause
    if when := OVER_A_TIME.match(clause, match.start()):  # "over fourteen years": when, not what it is compared with
        later = COMPARATOR.search(clause, when.end())  # "… over 12 weeks compared with placebo"
        return (_phrase(later.group("rest")) if later else ""), clause[: match.start()]
    return _phrase(match.group("rest")), clause[: match.start()]


_BETWEEN = re.compile(r"(\bbetween\s+\S+(?:\s+\S+)?)\s+and\s+", _I)
_AND = "\u0002"
"""The "and" of "between A and B" held while a clause is split at its joints: it joins no exposure to an outcome."""


def _split(clause: str) -> tuple[str, str]:
    """Exposure and outcome: either side of the relation verb, else of *and*/*with*, else the whole clause."""
    relation = RELATION.search(clause)
    if relation is not None and relation.group(0).lower().endswith("between"):  # "a link between X and Y"
        pair = re.split(r"\s+and\s+", clause[relation.end():], maxsplit=1)
        if len(pair) == 2 and _content(pair[0]) and _content(pair[1]):
            return _phrase(pair[0]), _phrase(pair[1])
    if relation is not None and _content(clause[: relation.start()]):
        return _phrase(clause[: relation.start()]), _phrase(clause[relation.end():])
    if relation is not None:  # "Is there a risk of X with Y", "Can a risk of …": the verb leads
        rest = clause[relation.end():]
        pair = re.split(r"\s+(?:with|after|from|in|of|and)\s+", rest, maxsplit=1)
        if len(pair) == 2 and _content(pair[1]):
            return _phrase(pair[1]), _phrase(pair[0])
        return _phrase(rest), ""
    held = _BETWEEN.sub(lambda pair: f"{pair[1]} {_AND} ", clause)  # "switching between A and B" is one name
    # "X effective and well tolerated": an "and" between two evaluations joins no exposure to an outcome
    held = re.sub(r"(?<=\S)\s+and\s+(?=\S)", lambda joint: f" {_AND} " if _evaluations(held, joint) else joint.group(0),
                  held)
    for joint in (r"\s+and\s+", r"\s+with\s+", r"\s+(?:on|after|following|during)\s+"):
        pair = [part.replace(_AND, "and") for part in re.split(joint, held, maxsplit=1)]
        if len(pair) == 2 and _content(pair[0]) and _content(pair[1]):
            return _phrase(pair[0]), _phrase(pair[1])
    return _phrase(clause), ""


def _evaluations(clause: str, joint: re.Match[str]) -> bool:
    """Whether ``joint`` (an "and") joins two evaluations that end the clause: the word before it and every word
    after it :data:`EVALUATIVE` ("metformin effective and well tolerated"; not "fundectomy safe and effective as
    revision surgery", whose "and" the rules split as before)."""
    before, after = clause[:joint.start()].split(), clause[joint.end():].split()
    return bool(before and after) and all(word.lower().strip(".,'?") in EVALUATIVE for word in (before[-1], *after))


def _content(text: str) -> list[str]:
    return [w for w in re.findall(r"[\w\-']+", text) if w.lower() not in DROPPED]


def _phrase(text: str) -> str:
    """``text`` as a frame term, in the question's own words: function words, question words and generic verbs
    trimmed from both ends ("the risk of stroke" → "risk of stroke"); empty when no content word is left."""
    tokens = text.replace("?", " ").split()
    while tokens and _dropped(tokens[0]) and not (tokens[0].lower() in NEGATIONS and len(tokens) > 1) and not (
            len(tokens) > 2 and tokens[0].lower() == "time" and tokens[1].lower() in ("to", "until", "till", "before")):
        tokens.pop(0)  # "time to relapse" names a time, not relapse (a later relapse is the better)
    while tokens and _dropped(tokens[-1]) and not _ends_name(tokens):
        tokens.pop()
    return " ".join(tokens).strip(" -',.;") if _content(" ".join(tokens)) else ""


def _ends_name(tokens: list[str]) -> bool:
    """Whether the last of ``tokens`` is a noun that ends the name before it (:data:`NAME_ENDS`: "emergence
    time", "antibiotic use"), or a name's letter in capitals ("vitamin A", "drug A", "type I": never the article or
    pronoun it spells), not a word of the question's phrasing."""
    last = tokens[-1].strip(".,;:'\"()")
    return (len(tokens) > 1 and (last.lower() in NAME_ENDS or last.isupper())
            and not _dropped(tokens[-2]) and tokens[-2].lower().strip(".,;:'\"()") not in STOP_WORDS)


def _dropped(token: str) -> bool:
    word = token.strip(".,;:'\"()").lower()
    return not word or word in DROPPED or word in {"really", "actually", "adequately", "significantly"}
