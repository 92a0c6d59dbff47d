"""Agents and the model layer they share.

The model layer: :mod:`.model_spec` (spec strings, defaults, per-agent overrides), :mod:`.llm` (building models,
``LLM.call``, ``ModelError``), :mod:`.local_model` (in-process GGUF), :mod:`.pricing`, :mod:`.redaction` (secret
scrubbing) and :mod:`.query_plan` (the search planner's output). Nothing is re-exported here, so importing a light
module (``model_spec``, ``redaction``) does not load the provider SDKs (~2.5 s) that :mod:`.llm` needs.
"""
