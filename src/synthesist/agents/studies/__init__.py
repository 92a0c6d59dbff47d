"""Studies shown and asked: what the agents make of the reading core's study records
(:mod:`synthesist.reading.studies`).

- :mod:`.llm_reader`: the study record read by a language model, checked by the learned reader;
- :mod:`.table`: the evidence table (Markdown and CSV); :mod:`.forest`: the forest plot's rows;
- :mod:`.pooling`: the exploratory random-effects pool of the forest plot's ratios.
"""
