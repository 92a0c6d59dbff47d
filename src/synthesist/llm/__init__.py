"""The model layer: every model call of a run goes through it (docs/architecture/models.md).

:mod:`.model_spec` (spec strings, labels, defaults, per-agent overrides), :mod:`.core` (building models, ``LLM.call``,
error translation), :mod:`.chat_wire` (the OpenAI-style Chat Completions wire), :mod:`.providers` (the SDK clients and
the one retry policy), :mod:`.chat_client` (Magentic's chat client and its tape), :mod:`.recorded` (``LLM.call`` on
the tape), :mod:`.local_model` (in-process GGUF), :mod:`.hf_model` (in-process Transformers, imported lazily) and
:mod:`.pricing` (the one usage record). It imports only the leaves and :mod:`synthesist.tools` (HTTP, the cassette).
Nothing is re-exported here, so importing a light module (``model_spec``) does not load what :mod:`.core` needs.
"""
