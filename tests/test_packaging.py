"""What the built wheel holds: the product and its fitted models, none of the lab (docs/architecture/overview.md)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from synthesist.reading.shipped import MODELS, fitted_model

REPO = Path(__file__).resolve().parent.parent


def test_the_wheel_ships_the_fitted_models_and_none_of_the_lab(tmp_path: Path) -> None:
    tree = tmp_path / "tree"  # the tracked files alone: no build folder of an earlier build leaks in
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        if (REPO / name).is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, tree / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                            "--wheel-dir", str(tmp_path / "wheel"), str(tree)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    with zipfile.ZipFile(next((tmp_path / "wheel").glob("synthesist-*.whl"))) as wheel:
        names = wheel.namelist()
        data = [wheel.read(name) for name in names if name.endswith(".json")]
    assert {f"synthesist/reading/fitted/{name}/{part}" for name in MODELS for part in ("model.json", "CARD.md")} <= set(
        names)
    heads = {name.removeprefix("src/") for name in filter(None, listed.decode().split("\0"))
             if name.startswith("src/synthesist/reading/fitted/")}
    assert "synthesist/reading/fitted/study_reader/conclusion.json" in heads and heads <= set(names)  # every head
    assert "synthesist/api.py" in names and "synthesist/llm/core.py" in names
    lab = [name for name in names if any(word in name for word in ("fitting", "evaluation", "folds", "bench/"))]
    assert lab == []
    assert not any(b"training_folds" in raw or b"fold_gates" in raw for raw in data)  # no dev pmid, no fold fit


def test_every_fitted_model_has_one_folder_with_its_card() -> None:
    """Each shipped model is ``reading/fitted/NAME/``: its weights and a data card that names its data, the command that
    trains it (a script in bench/) and its held-out figure."""
    fitted = REPO / "src" / "synthesist" / "reading" / "fitted"
    assert tuple(sorted(path.name for path in fitted.iterdir() if path.is_dir())) == MODELS
    for name in MODELS:
        card = (fitted / name / "CARD.md").read_text(encoding="utf-8")
        assert (fitted / name / "model.json").stat().st_size > 0
        fields = set(re.findall(r"\*\*\w+(?: \w+)?\*\*", card))
        assert {"**Data**", "**Trainer**", "**Held out**", "**Fitted**"} <= fields, name
        scripts = re.findall(r"bench/[\w/]+\.py", card.split("**Trainer**")[1].split("\n- ")[0])
        assert scripts and all((REPO / script).is_file() for script in scripts), name
        assert fitted_model(name)  # the loader reads it
