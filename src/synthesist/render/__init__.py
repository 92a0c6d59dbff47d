"""Rendering: what a run's report, table, appraisal and forest plot look like as Markdown, CSV, BibTeX and SVG.

:mod:`.report` (report.md and the BibTeX file), :mod:`.appraisal` (the report's appraisal lines), :mod:`.table` (the
evidence table as Markdown and CSV), :mod:`.forest` (the forest plot), :mod:`.markdown` (text from a source made
inert). The faces and the session's report files call it; it decides nothing (what the rows and grades are is
:mod:`synthesist.appraisal`'s)."""
