"""The agents: Search, Judge, Hypothesis and Report (each over the model layer, :mod:`synthesist.llm`, with the
extractive engine, :mod:`synthesist.extractive`, as its fallback), the team call that asks Judge and Hypothesis in
one model call (:mod:`.team`), and the image loop (:mod:`.visual`). What code decides about an answer (the gate, the
claim check, conflicts, certainty, the evidence table) is :mod:`synthesist.appraisal`; rendering is
:mod:`synthesist.render` (docs/architecture/overview.md)."""
