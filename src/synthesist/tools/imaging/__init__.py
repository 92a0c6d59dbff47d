"""The image viewer a vision model drives: safe loading, the image under analysis, and 23 tools.

``ImageManager.open(path, max_pixels=…, max_bytes=…)`` loads an image; ``VIEWER_TOOLS[name].run(manager, args)``
applies a tool and returns a :class:`ToolOutput`; ``openai_tool_specs()`` lists the tools for a model. Boxes and
points are fractions 0–1 of the current view.
"""

from .arguments import ToolArgumentError, validate_arguments
from .base import Outcome, ToolOutput, ViewerTool
from .loading import FORMATS, ImageError, PixelData, display_image, load_image, to_pixels
from .manager import Annotation, Category, ImageManager, Operation
from .tools import VIEWER_TOOLS, openai_tool_specs

__all__ = [
    "FORMATS",
    "VIEWER_TOOLS",
    "Annotation",
    "Category",
    "ImageError",
    "ImageManager",
    "Operation",
    "Outcome",
    "PixelData",
    "ToolArgumentError",
    "ToolOutput",
    "ViewerTool",
    "display_image",
    "load_image",
    "openai_tool_specs",
    "to_pixels",
    "validate_arguments",
]
