"""The no-LLM engine: the four agent contracts met deterministically from the evidence itself.

:func:`~.queries.plan_queries`, :func:`~.judge.assess`, :func:`~.hypotheses.generate` and
:func:`~.report.write_report` (docs/architecture/contracts.md, "The extractive engine"). Text that addresses a model
("ignore previous instructions …") is dropped when an item is read (:mod:`synthesist.appraisal.item_reading`), so
it is never quoted and never moves a score."""

from ..appraisal.relevance import question_relevance
from .hypotheses import generate
from .judge import assess
from .queries import plan_queries
from .report import write_report

__all__ = ["assess", "generate", "plan_queries", "question_relevance", "write_report"]
