"""Studies as evidence: the study record of an item and what it found for an (intervention, comparator, outcome).

- :func:`~.record.read_study` → :class:`~synthesist.study.StudyRecord` — design, participants, population, arms and
  outcome results read by rule, each a verbatim span of the item with its section;
- :func:`~.record.study_design` — the item's design, the one reading of it that every part takes;
- :func:`~.learned.answer_query` → :class:`~synthesist.study.OutcomeResult` — the direction of one outcome;
- :func:`~.verify.verify_record` — drops and lists whatever is not found verbatim in the source.
"""

from .learned import answer_query
from .record import read_study, registry_record, study_design
from .verify import source_text, verify_record

__all__ = ["answer_query", "read_study", "registry_record", "source_text", "study_design", "verify_record"]
