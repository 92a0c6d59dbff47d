"""The no-LLM engine: the four agent contracts met deterministically from the evidence itself.

It is the default when no language model is configured, so it is built to be useful on its own:

- :func:`~.queries.plan_queries` → :class:`~synthesist.agents.query_plan.QueryPlan` — queries by rule from the
  question's entities, the judge's and hypotheses' requests, and MeSH synonyms found in the evidence;
- :func:`~.judge.assess` → :class:`~synthesist.models.JudgeAssessment` — scores from counted signals (designs,
  mechanistic sentences, sources, agreement), given each item's relevance from
  :func:`~.relevance.question_relevance`;
- :func:`~.hypotheses.generate` → :class:`~synthesist.models.HypothesisAssessment` — the mechanisms the evidence
  states, with the items for and against them;
- :func:`~.report.write_report` → :class:`~synthesist.models.ResearchReport` — quoted, cited sentences chosen by
  MMR, trial facts from registry fields, limitations from counts.

Text that addresses a model ("ignore previous instructions …") is dropped when an item is read
(:mod:`.reading`), so it is never quoted and never moves a score.
"""

from .hypotheses import generate
from .judge import assess
from .queries import plan_queries
from .relevance import question_relevance
from .report import write_report

__all__ = ["assess", "generate", "plan_queries", "question_relevance", "write_report"]
