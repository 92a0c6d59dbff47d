"""The faces (cli, service, mcp, batch, Ray) import only `synthesist.api`, leaf modules and each other:
nothing below the API (docs/architecture/overview.md)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "src" / "synthesist"
FACES = ("cli", "cli_commands", "cli_interrupt", "cli_parser", "cli_progress", "cli_serve", "cli_study", "cli_watch",
         "service", "mcp_server", "mcp_stdio", "batch", "ray_backend")
LEAVES = ("models", "events", "event_text", "errors", "config", "identity", "inputs", "titles", "wording", "study",
          "redaction", "run_options", "run_limits", "onnx_encoder")
ALLOWED = {"api", "__version__", *LEAVES, *FACES}


def _internal_imports(path: Path) -> set[str]:
    """The first component under ``synthesist`` of every package-internal import in ``path``."""
    found = set()
    depth = len(path.relative_to(PACKAGE).parts) - 1  # how deep the module sits below the package
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative: climb to the package, then the first named part
                parts = (node.module or "").split(".") if node.module else []
                if node.level - 1 < depth:  # within the face's own subpackage (service/…)
                    continue
                names = parts[:1] or [alias.name for alias in node.names]
                found.update(names)
            elif node.module and node.module.startswith("synthesist."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[1] for alias in node.names if alias.name.startswith("synthesist."))
    return found


def test_faces_import_only_the_api_leaves_and_other_faces() -> None:
    files = [path for face in FACES for path in ([PACKAGE / f"{face}.py"] if (PACKAGE / f"{face}.py").exists()
                                                   else sorted((PACKAGE / face).glob("*.py")))]
    assert len(files) >= len(FACES)
    below = {str(path.relative_to(PACKAGE)): sorted(_internal_imports(path) - ALLOWED) for path in files}
    assert {name: modules for name, modules in below.items() if modules} == {}


def test_the_reading_core_stands_below_the_agents_and_imports_only_leaves() -> None:
    """reading/ (the reading core: text primitives, the readers, the learned models; reading/studies/ too) is imported
    by agents and imports none of them (docs/architecture/overview.md, studies.md)."""
    files = sorted((PACKAGE / "reading").rglob("*.py"))
    assert files
    above = {str(path.relative_to(PACKAGE)): sorted(_internal_imports(path) - set(LEAVES)) for path in files}
    assert {name: modules for name, modules in above.items() if modules} == {}


FLOORS = {
    "llm": {"tools"},
    "appraisal": {"reading", "memory", "tools", "prompts", "llm", "registrations"},
    "render": {"appraisal", "reading", "memory", "registrations"},
    "extractive": {"appraisal", "reading", "memory", "tools", "registrations"},
}
"""What each package between the reading core and the agents may import besides the leaves: the model layer stands on
the tools; the appraisal (policy over the readers) on the readers, memory and the model layer; rendering on the
appraisal; the extractive engine on the appraisal, beside the agents (docs/architecture/overview.md)."""


def test_the_model_layer_appraisal_rendering_and_the_engine_stand_on_their_floors() -> None:
    above = {}
    for package, allowed in FLOORS.items():
        files = sorted((PACKAGE / package).rglob("*.py"))
        assert files, package
        for path in files:
            extra = _internal_imports(path) - set(LEAVES) - allowed - {package}
            if extra:
                above[str(path.relative_to(PACKAGE))] = sorted(extra)
    assert above == {}


def test_the_agents_room_holds_the_agents_and_no_more() -> None:
    lines = sum(len(path.read_text(encoding="utf-8").splitlines()) for path in (PACKAGE / "agents").rglob("*.py"))
    assert lines <= 3_500


def test_only_the_engine_selector_imports_the_extractive_engine() -> None:
    """The extractive engine stands beside the LLM agents behind the same contracts (``agents/base.Engine``): the
    composition root selects it (``composition.extractive_engine``); no agent, step of the orchestrator or face
    imports it."""
    outside = [path for path in PACKAGE.rglob("*.py") if path.relative_to(PACKAGE).parts[0] != "extractive"]
    importers = sorted(str(path.relative_to(PACKAGE)) for path in outside if "extractive" in _internal_imports(path))
    assert importers == ["composition.py"]
