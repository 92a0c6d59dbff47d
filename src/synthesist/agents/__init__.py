"""Agents and the model layer they share.

The model layer (every model call of a run goes through it; docs/architecture/models.md): :mod:`.model_spec` (spec
strings, labels, defaults, per-agent overrides), :mod:`.llm` (building models, ``LLM.call``, error translation),
:mod:`.providers` (the SDK clients and the one retry policy), :mod:`.chat_client` (Magentic's chat client and its
tape), :mod:`.recorded` (``LLM.call`` on the tape), :mod:`.local_model` (in-process GGUF), :mod:`.hf_model`
(in-process Transformers, imported lazily), :mod:`.pricing` (the one usage record) and :mod:`.query_plan` (the
search planner's output). The image loop calls its model through :mod:`.visual.adapter`. Secret scrubbing is the
leaf :mod:`synthesist.redaction`. Nothing is re-exported here, so importing a light module (``model_spec``) does not
load the provider SDKs (~2.5 s) that :mod:`.llm` needs.
"""
