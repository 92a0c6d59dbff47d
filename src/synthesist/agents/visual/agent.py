"""The visual agent: looks at one image for a research question, with a vision model or by measurement alone.

    agent = VisualAgent(searches=[LiteratureSearchTool(pubmed)])
    report = await agent.analyze(path, question, adapter=adapter, settings=settings)   # adapter None → protocol
    evidence = findings_as_evidence(report, path)

With an adapter, the :class:`RadiologyProcessor` loop runs over the viewer's tools (plus any search tools);
:meth:`stream` yields each :class:`Turn` as it ends (for ``analyzing`` events: :func:`turn_summary`) and then the
:class:`VisualReport`. Without one, the deterministic :func:`run_protocol` measures the image.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

from ...config import Settings
from ...tools.imaging import VIEWER_TOOLS, ImageManager, ViewerTool
from ...tools.imaging.cxr import load_cxr_tools
from .adapter import VisionAdapter
from .expert import findings_of, outputs_in_turns
from .processor import AgenticProcessor
from .protocol import run_protocol
from .radiology import RadiologyProcessor
from .report import VisualReport, findings_from_answer
from .tooling import SearchTool, ToolBox
from .types import AgenticResult, Turn

log = logging.getLogger("synthesist.visual")

PROTOCOL_ENGINE = "protocol"


class VisualAgent:
    """Analyses images. ``viewer`` are the viewer tools offered (default all); ``searches`` extra search tools."""

    def __init__(self, *, viewer: Mapping[str, ViewerTool] = VIEWER_TOOLS, searches: Sequence[SearchTool] = ()):
        self.viewer = viewer
        self.searches = tuple(searches)

    async def analyze(self, image_path: Path | str, question: str, *, adapter: VisionAdapter | None,
                      settings: Settings) -> VisualReport:
        """The report on ``image_path``. Raises ImageError (a BadInputError) for an unusable image, and
        VisualLoopError or ModelError when the vision model cannot produce a valid answer."""
        report: VisualReport | None = None
        async for item in self.stream(image_path, question, adapter=adapter, settings=settings):
            if isinstance(item, VisualReport):
                report = item
        assert report is not None  # stream() ends with a report or raises
        return report

    async def stream(self, image_path: Path | str, question: str, *, adapter: VisionAdapter | None,
                     settings: Settings) -> AsyncIterator[Turn | VisualReport]:
        """Each loop turn as it ends (none for the protocol), then the report."""
        visual = settings.visual
        manager = ImageManager.open(image_path, max_pixels=visual.max_image_pixels, max_bytes=visual.max_image_bytes)
        expert = await asyncio.to_thread(load_cxr_tools, visual.cxr_weights_dir)  # chest X-ray networks, if any
        warnings = (expert.notice,) if expert.notice else ()  # said once, by the report (and the run's event)
        if adapter is None:
            report = await asyncio.to_thread(self._protocol_report, manager, question, expert.tools)
            yield report.model_copy(update={"warnings": (*warnings, *report.warnings)})
            return
        processor = self.processor(adapter, manager, question, settings, expert=expert.tools)
        async for item in processor.stream():
            if isinstance(item, AgenticResult):
                yield _model_report(manager.name, question, item, adapter.label, warnings)
            else:
                yield item

    def processor(self, adapter: VisionAdapter, manager: ImageManager, question: str, settings: Settings, *,
                  expert: Mapping[str, ViewerTool] = MappingProxyType({})) -> AgenticProcessor:
        """The radiologist over the viewer tools, the ``expert`` tools (chest X-ray networks) and the searches."""
        tools = ToolBox(manager, {**self.viewer, **expert}, self.searches)
        return RadiologyProcessor(adapter, manager, question=question, settings=settings.visual, tools=tools,
                                  max_tokens=settings.models.max_output_tokens)

    @staticmethod
    def _protocol_report(manager: ImageManager, question: str,
                         expert: Mapping[str, ViewerTool] = MappingProxyType({})) -> VisualReport:
        measured = run_protocol(manager, question, expert=expert)
        log.info("visual protocol measured %s: %d findings", manager.name, len(measured.findings))
        return VisualReport(
            image=manager.name, question=question, findings=measured.findings, impression=measured.impression,
            suggested_searches=measured.suggested_searches, non_diagnostic=True, engine=PROTOCOL_ENGINE,
            measurements=measured.measurements, warnings=measured.warnings,
        )


def _model_report(image: str, question: str, result: AgenticResult, engine: str,
                  warnings: tuple[str, ...] = ()) -> VisualReport:
    """The model's answer; the outputs of expert tools it called join the findings, with the weights' identity."""
    answer = result.final
    outputs = outputs_in_turns(result)
    return VisualReport(
        image=image, question=question, findings=findings_from_answer(answer) + findings_of(outputs),
        impression=str(answer.get("impression", "")).strip(),
        suggested_searches=tuple(q.strip() for q in answer.get("suggested_searches", []) if q.strip()),
        non_diagnostic=False, engine=engine, result=result,
        measurements={"cxr": outputs} if outputs else {}, warnings=warnings,
    )
