"""Model calls through a cassette: recorded as a run makes them, or replayed with no model at all.

:class:`RecordedLLM` has the one method agents call (:meth:`~synthesist.llm.core.LLM.call`). Recording, it asks
the real :class:`~synthesist.llm.core.LLM` and writes each validated output (or the :class:`ModelError` it
raised, so a replay falls back exactly where the recorded run did) to the cassette. Replaying, it returns the
recorded outputs of each agent in the order they were made, validated against the output type asked for.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import CassetteError, ModelError
from ..models import TokenUsage
from ..tools.cassette import Cassette
from .core import LLM, LLMReply, OutputTools

T = TypeVar("T")


class RecordedLLM:
    """An LLM whose calls go through ``cassette``: around ``inner`` when recording, from the tape when replaying."""

    def __init__(self, cassette: Cassette, inner: LLM | None = None, *, label: str | None = None):
        if cassette.mode == "record" and inner is None:
            raise ValueError("recording model calls needs the real model")
        self._cassette = cassette
        self._inner = inner
        self.label = inner.label if inner is not None else (label or "replay")

    async def __aenter__(self) -> RecordedLLM:
        if self._inner is not None:
            await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        if self._inner is not None:
            await self._inner.__aexit__(*exc_info)

    async def call(self, *, agent: str, output_type: type[T], system: str, prompt: str, round: int = 0,
                   tools: OutputTools | None = None) -> LLMReply[T]:
        name = output_type.__name__
        if self._cassette.mode == "replay":
            return self._replay(agent, output_type, name)
        assert self._inner is not None
        try:
            reply = await self._inner.call(agent=agent, output_type=output_type, system=system, prompt=prompt,
                                           round=round, tools=tools)
        except ModelError as exc:
            self._cassette.record_model(agent, name, None, {"model": self.label, "error": {
                "kind": exc.kind, "message": exc.message, "status_code": exc.status_code}})
            raise
        output = reply.output.model_dump(mode="json") if isinstance(reply.output, BaseModel) else reply.output
        self._cassette.record_model(agent, name, output, reply.usage.model_dump(mode="json"))
        return reply

    def _replay(self, agent: str, output_type: type[T], name: str) -> LLMReply[T]:
        output, usage = self._cassette.next_model(agent, name)
        error = usage.get("error")
        if error:
            raise ModelError(agent, str(error.get("kind", "provider")), str(error.get("message", "")),
                             model=self.label, status_code=error.get("status_code"))
        try:
            value = output_type.model_validate(output) if issubclass(output_type, BaseModel) else output
            recorded = TokenUsage.model_validate(usage)
        except ValidationError as exc:
            raise CassetteError(self._cassette.directory, f"the {agent} agent's recorded {name} no longer "
                                "fits its type") from exc
        return LLMReply(output=value, usage=recorded)
