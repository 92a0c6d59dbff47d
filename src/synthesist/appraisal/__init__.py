"""What code decides about an answer, over the reading core (:mod:`synthesist.reading`): policy, not prose.

The Answer from the items (:mod:`.bottom_line`, :mod:`.item_reading`, :mod:`.findings`, :mod:`.trials`,
:mod:`.relevance`, :mod:`.gate`) and the gate on a model's answer (:mod:`.answer_gate`); citations and the claim
check (:mod:`.citations`, :mod:`.claims`, :mod:`.uncited`); the cards a model is shown (:mod:`.cards`,
:mod:`.passage_rank`); conflicts, certainty, the pool and the report's appraisal (:mod:`.conflicts`,
:mod:`.certainty`, :mod:`.pooling`, :mod:`.forest_rows`, :mod:`.appraise`); the evidence table's rows and the LLM
study reader (:mod:`.evidence_table`, :mod:`.llm_reader`); the judge's sufficiency rule (:mod:`.sufficiency`)."""
