"""The words that tell what a sentence is: a result, a null result, a mechanism — or an instruction to a machine.

Every vocabulary is a compiled pattern with a docstring saying what it matches. Sentences are classified, never
understood: the patterns are deliberately specific (``did not differ`` is a null result; ``did not receive`` is
not), and their limits are stated where they matter.
"""

from __future__ import annotations

import re

_I = re.IGNORECASE

RESULT = re.compile(
    r"\b(?:significant(?:ly)?|reduc(?:ed|es|tion)|increas(?:ed|es)|decreas(?:ed|es)|improv(?:ed|es|ement)|"
    r"lower(?:ed)?|higher|associated with|correlat(?:ed|ion)|predict(?:ed|s|ive)|hazard ratio|odds ratio|"
    r"relative risk|risk ratio|confidence interval|95\s?%\s?CI|HR\s?[=:]|OR\s?[=:]|RR\s?[=:]|AUC|sensitivity|"
    r"specificity|mortality|survival|efficacy|effective|superior|inferior|no difference|did not differ)\b"
    r"|\bp\s?[<=≤>]\s?0?\.\d|\d\s?%",
    _I,
)
"""Result language: effect words, effect measures, p-values, percentages."""

NULL_RESULT = re.compile(
    r"\b(?:no (?:statistically )?significant|not (?:statistically )?significant(?:ly)?|non-?significant|"
    r"no (?:significant )?(?:difference|association|effect|benefit|improvement|change|correlation)s?|"
    r"not (?:significantly )?(?:associated|correlated|related|different|improved|reduced|increased)|"
    r"did not (?:significantly )?(?:differ|reduce|improve|increase|decrease|change|affect|alter|lower|prevent|"
    r"predict|show|reach|find)|does not (?:significantly )?(?:differ|reduce|improve|increase|affect|predict)|"
    r"failed to (?:show|demonstrate|reduce|improve|find)|was not (?:associated|effective|superior)|"
    r"were not (?:associated|different|effective)|(?:was|were) (?:similar|comparable) (?:between|in|among))\b",
    _I,
)
"""Null or negative results: no effect, no difference, not associated, failed to show."""

MECHANISM_TERM = re.compile(
    r"\b(?:pathways?|receptors?|inhibit\w*|activat\w*|phosphorylat\w*|dephosphorylat\w*|express\w*|"
    r"signal(?:l)?ing|transcription\w*|kinases?|enzym\w*|mitochondri\w*|apoptosis|apoptotic|autophagy|"
    r"proliferation|oxidative|cytokines?|mRNA|gene|genes|protein|proteins|mediat\w*|upregulat\w*|"
    r"up-regulat\w*|downregulat\w*|down-regulat\w*|suppress\w*|induc\w*|ligand|agonist|antagonist|"
    r"metaboli[sz]m|glycolysis|gluconeogenesis|lipogenesis|angiogenesis|cell cycle|insulin sensitivity|"
    r"insulin resistance|AMPK|mTOR\w*|NF-κB|NF-kappaB|PI3K|Akt|MAPK|ERK\d?|JAK|STAT\d?|caspase\S*|Bcl-2)\b",
    _I,
)
"""Mechanism vocabulary, counted per word for density."""

MECHANISM_VERB = re.compile(
    r"\b(?:activat(?:es|ed|ing|ion)|inhibit(?:s|ed|ing|ion)|suppress(?:es|ed|ing|ion)|block(?:s|ed|ing|ade)|"
    r"induc(?:es|ed|ing|tion)|stimulat(?:es|ed|ing|ion)|upregulat\w+|up-regulat\w+|downregulat\w+|"
    r"down-regulat\w+|phosphorylat\w+|mediated by|via|through|pathway|signal(?:l)?ing|depend(?:s|ent) on|"
    r"target(?:s|ed|ing)|bind(?:s|ing)?|attenuat(?:es|ed|ing)|modulat(?:es|ed|ing)|enhanc(?:es|ed|ing)|"
    r"reduc(?:es|ed|ing|tion) (?:of )?(?:the )?(?:expression|activity|levels?|phosphorylation))\b",
    _I,
)
"""A verb or connective that states a mechanism: X activates / inhibits / acts via / is mediated by Y."""

INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\b.{0,40}\b(?:instructions?|prompts?|rules|above|previous|prior)\b|"
    r"\bdeclare\b.{0,60}\b(?:sufficient|complete|conclusive|adequate|proven)\b|"
    r"\byou (?:are|must|should|will|have to)\b|\bsystem prompt\b|\bas an ai\b|\b(?:assistant|system|user)\s*:|"
    r"\b(?:recommendation|sufficient|verdict)\s*[:=]|\brespond (?:only )?with\b|\boutput (?:only|the following)\b|"
    r"\bnew instructions?\b|\bjailbreak\b",
    _I,
)
"""Text addressed to a model rather than a reader. Such sentences are dropped before anything is counted."""

FUTURE_WORK = re.compile(
    r"\b(?:are|is|were|remains?|will be|would be) (?:needed|warranted|required|lacking|unclear|unknown)\b"
    r"|\bfurther (?:studies|research|trials)\b|\bfuture\b|"
    r"\bshould be (?:investigated|explored|studied|evaluated)\b",
    _I,
)
"""Calls for more research: a design named here ("RCTs are needed") was not done."""


def is_result(sentence: str) -> bool:
    return bool(RESULT.search(sentence))


def is_null_result(sentence: str) -> bool:
    return bool(NULL_RESULT.search(sentence))


def is_instruction(text: str) -> bool:
    """True for text that addresses a model ("ignore previous instructions", "you are", "system prompt")."""
    return bool(INSTRUCTION.search(text))


def mechanism_hits(text: str) -> int:
    """How many mechanism-vocabulary words ``text`` holds."""
    return len(MECHANISM_TERM.findall(text))


def states_mechanism(sentence: str) -> bool:
    """A mechanism verb or connective together with at least one other mechanism word."""
    verbs = MECHANISM_VERB.findall(sentence)
    return bool(verbs) and mechanism_hits(sentence) + len(verbs) >= 3


def is_future_work(sentence: str) -> bool:
    return bool(FUTURE_WORK.search(sentence))
