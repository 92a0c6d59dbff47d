"""The image step a run takes before its first search round (``--image``), behind the contract the orchestrator holds
(:class:`synthesist.orchestrator.runner.ImageStep`): it reads one image with the visual agent and gives back what the
run needs in the leaves' types: each turn's summary as it ends, a model failure (the deterministic viewer protocol
then measures the image instead) and, last, an :class:`~synthesist.events.ImageReading`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from ...config import Settings
from ...errors import ModelError, VisualLoopError
from ...events import ErrorData, ImageReading, TurnSummary
from ...llm.pricing import priced_usage
from ...models import TokenUsage
from .adapter import VisionAdapter
from .agent import PROTOCOL_ENGINE, VisualAgent
from .report import VisualReport, findings_as_evidence, turn_summary


@dataclass(frozen=True)
class VisualStep:
    """One image, the agent that reads it (with the searches it may run) and the vision model (None: the
    protocol)."""

    path: Path
    agent: VisualAgent
    adapter: VisionAdapter | None

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def engine(self) -> str:
        """Who reads the image: the vision model's label, or ``protocol``."""
        return self.adapter.label if self.adapter else PROTOCOL_ENGINE

    async def read(self, question: str, settings: Settings) -> AsyncIterator[TurnSummary | ErrorData | ImageReading]:
        """Each turn's summary as it ends; on a vision model's failure, the failure (and the protocol reads the
        image instead); last, what was read."""
        report: VisualReport | None = None
        try:
            async for item in self.agent.stream(self.path, question, adapter=self.adapter, settings=settings):
                if isinstance(item, VisualReport):
                    report = item
                else:
                    yield turn_summary(item)
        except (VisualLoopError, ModelError) as exc:
            yield ErrorData(kind="model", detail=str(exc), fallback="protocol")
            report = await self.agent.analyze(self.path, question, adapter=None, settings=settings)
        assert report is not None
        looked_up = [e for tool in self.agent.searches for e in getattr(tool, "found", ())]  # literature it read
        yield ImageReading(
            evidence=(*findings_as_evidence(report, self.path), *looked_up),
            findings=tuple(f"{f.label}: {f.description}".strip(": ") for f in report.findings),
            turns=report.turn_summaries(), warnings=report.warnings,
            suggested_searches=report.suggested_searches, usage=self._usage(report))

    def _usage(self, report: VisualReport) -> TokenUsage | None:
        """The vision model's tokens and cost, under the agent ``visual`` (None when no model was asked)."""
        usage = report.result.usage if report.result is not None else None
        if self.adapter is None or usage is None or not usage.requests:
            return None
        return priced_usage(agent="visual", label=self.adapter.label, input_tokens=usage.input_tokens,
                            output_tokens=usage.output_tokens, requests=usage.requests, round=0)
