"""The tool registry, OpenAI specs, argument validation and the category → flag contract."""

from __future__ import annotations

import json

import numpy as np
import pytest
from imaging_samples import MINIMAL_ARGS, noise, run

from synthesist.errors import BadInputError
from synthesist.tools.imaging import VIEWER_TOOLS, ImageManager, ToolArgumentError, openai_tool_specs

CATEGORIES = {
    "coordinate": {"zoom", "crop", "rotate", "flip_horizontal", "flip_vertical"},
    "intensity": {"threshold", "window_level", "equalize_histogram", "adaptive_equalize", "invert", "detect_edges",
                  "symmetry_diff", "morphological", "denoise", "adjust_contrast", "adjust_brightness",
                  "adjust_sharpness"},
    "readonly": {"get_intensity_stats", "intensity_profile", "measure", "show_grid", "annotate_region"},
    "reset": {"reset"},
}


def test_there_are_23_tools_in_the_documented_categories():
    assert len(VIEWER_TOOLS) == 23
    by_category = {category: {n for n, t in VIEWER_TOOLS.items() if t.category == category} for category in CATEGORIES}
    assert by_category == CATEGORIES


def test_openai_specs_are_complete_json_schemas():
    specs = openai_tool_specs()
    assert [spec["function"]["name"] for spec in specs] == list(VIEWER_TOOLS)
    for spec in specs:
        function = spec["function"]
        schema = function["parameters"]
        assert spec["type"] == "function" and len(function["description"]) > 40
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        for name, prop in schema["properties"].items():
            assert prop.get("description"), (function["name"], name)
            if prop["type"] in ("number", "integer") and "enum" not in prop:
                assert "minimum" in prop and "maximum" in prop, (function["name"], name)
    json.dumps(specs)
    assert [s["function"]["name"] for s in openai_tool_specs(("zoom", "reset"))] == ["zoom", "reset"]


@pytest.mark.parametrize("name", list(VIEWER_TOOLS))
def test_each_tool_sets_the_flags_of_its_category(name: str):
    manager = ImageManager.from_array(noise(40, 40))
    tool = VIEWER_TOOLS[name]

    output = tool.run(manager, MINIMAL_ARGS.get(name, {}))

    assert isinstance(output.text, str) and output.text
    assert manager.coordinates_modified is (tool.category == "coordinate")
    assert manager.intensity_modified is (tool.category == "intensity")
    if tool.category in ("coordinate", "intensity"):
        assert output.image_changed and manager.history[-1].tool == name
        assert manager.history[-1].category == tool.category


@pytest.mark.parametrize(
    ("tool", "arguments", "argument", "message"),
    [
        ("zoom", {"box": [0, 0, 0.5, 0.5], "factor": 20}, "factor", "between 1 and 8 (got 20)"),
        ("zoom", {"factor": 2}, "box", "is required"),
        ("crop", {"box": [0, 0, 1.5, 1]}, "box", "between 0 and 1"),
        ("crop", {"box": [0.5, 0, 0.2, 1]}, "box", "x0 < x1"),
        ("crop", {"box": [0.1, 0.1, 0.1001, 0.5]}, "box", "less than one pixel"),
        ("crop", {"box": [0, 0, 1]}, "box", "4 numbers"),
        ("rotate", {"angle": 45}, "angle", "one of 90, 180, 270"),
        ("adjust_contrast", {"factor": "high"}, "factor", "number between 0 and 4"),
        ("adjust_contrast", {"factor": True}, "factor", "number"),
        ("threshold", {"level": -0.1}, "level", "between 0 and 1"),
        ("adaptive_equalize", {"tiles": 2.5}, "tiles", "whole number"),
        ("denoise", {"method": "bilateral"}, "method", "one of median, gaussian"),
        ("measure", {"start": [0, 0], "end": [1, 1], "spacing": 1}, "spacing", "not an argument"),
        ("measure", {"start": [0, 0]}, "end", "is required"),
        ("window_level", {"preset": "lung"}, "preset", "one of ct_brain"),
    ],
)
def test_invalid_arguments_name_the_argument(tool: str, arguments: dict, argument: str, message: str):
    manager = ImageManager.from_array(noise(40, 40))

    with pytest.raises(ToolArgumentError) as caught:
        VIEWER_TOOLS[tool].run(manager, arguments)

    assert caught.value.tool == tool and caught.value.argument == argument
    assert message in str(caught.value) and f"'{argument}'" in str(caught.value)
    assert isinstance(caught.value, BadInputError)
    assert manager.history == () and not manager.coordinates_modified


def test_arguments_may_arrive_as_json_text():
    manager = ImageManager.from_array(noise(40, 40))
    VIEWER_TOOLS["crop"].run(manager, '{"box": [0, 0, 0.5, 0.5]}')
    assert manager.pixels.shape == (20, 20)
    with pytest.raises(ToolArgumentError, match="not valid JSON"):
        VIEWER_TOOLS["crop"].run(manager, '{"box": [0, 0')
    with pytest.raises(ToolArgumentError, match="must be a JSON object"):
        VIEWER_TOOLS["crop"].run(manager, [0, 0, 1, 1])


def test_defaults_are_filled_and_recorded():
    manager = ImageManager.from_array(noise(40, 40))
    run(manager, "zoom", box=[0, 0, 0.5, 0.5])
    assert manager.history[-1].arguments == {"box": (0.0, 0.0, 0.5, 0.5), "factor": 2}
    assert manager.pixels.shape == (40, 40)


def test_whole_number_floats_are_accepted_for_integers():
    manager = ImageManager.from_array(noise(40, 40))
    run(manager, "adaptive_equalize", tiles=4.0)
    assert manager.history[-1].arguments["tiles"] == 4


def test_describe_reports_size_and_state():
    manager = ImageManager.from_array(np.zeros((30, 50), dtype=np.float32))
    run(manager, "crop", box=[0, 0, 0.5, 1])
    described = manager.describe()
    assert (described["width"], described["height"]) == (25, 30)
    assert (described["original_width"], described["original_height"]) == (50, 30)
    assert described["coordinates_modified"] is True and described["operations"] == ["crop"]
