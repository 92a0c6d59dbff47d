"""Image analysis: a vision model drives the image viewer's tools in a multi-turn loop (GAZE-style), or, without
one, a deterministic protocol measures the image. See docs/architecture/visual.md.

- :mod:`.agent` — :class:`VisualAgent` (``analyze``/``stream``) and the protocol fallback;
- :mod:`.processor` — :class:`AgenticProcessor`, the loop and its recovery rules; :mod:`.radiology` its radiologist;
- :mod:`.adapter` — the :class:`VisionAdapter` seam and :class:`ModelVisionAdapter` (a model-layer model);
  :mod:`.wire` — the loop's messages to pydantic-ai messages and back;
- :mod:`.tooling`, :mod:`.search_tools` — the tools one analysis offers; :mod:`.conversation` — the messages;
- :mod:`.salvage` — reading JSON answers; :mod:`.protocol`; :mod:`.report` — reports, evidence, event summaries.
"""

from ...errors import VisualLoopError
from ...models import Usage
from .adapter import AdapterReply, ModelVisionAdapter, VisionAdapter, build_vision_adapter
from .agent import VisualAgent
from .processor import MAX_TURNS_CEILING, AgenticProcessor
from .protocol import NON_DIAGNOSTIC, run_protocol
from .radiology import RESPONSE_SCHEMA, RadiologyProcessor
from .report import ImageFinding, VisualReport, findings_as_evidence, turn_summary
from .search_tools import ImageSearchTool, LiteratureSearchTool
from .tooling import SearchTool, ToolBox
from .types import AgenticResult, ToolCall, ToolResult, Turn

__all__ = [
    "MAX_TURNS_CEILING",
    "NON_DIAGNOSTIC",
    "RESPONSE_SCHEMA",
    "AdapterReply",
    "AgenticProcessor",
    "AgenticResult",
    "ImageFinding",
    "ImageSearchTool",
    "LiteratureSearchTool",
    "ModelVisionAdapter",
    "OnField",
    "RadiologyProcessor",
    "SearchTool",
    "ToolBox",
    "ToolCall",
    "ToolResult",
    "Turn",
    "Usage",
    "VisionAdapter",
    "VisualAgent",
    "VisualLoopError",
    "VisualReport",
    "build_vision_adapter",
    "findings_as_evidence",
    "run_protocol",
    "turn_summary",
]
