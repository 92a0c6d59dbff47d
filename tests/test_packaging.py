"""What the built wheel holds: the product and its fitted models, none of the lab (docs/architecture/overview.md)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

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
    models = {"conclusion_model.json", "study_reader.json", "question_tagger.json", "sentence_roles.json",
              "alignment_gate.json"}
    assert models <= {Path(name).name for name in names}
    assert "synthesist/api.py" in names and "synthesist/llm/core.py" in names
    lab = [name for name in names if any(word in name for word in ("fitting", "evaluation", "folds", "bench/"))]
    assert lab == []
    assert not any(b"training_folds" in raw or b"fold_gates" in raw for raw in data)  # no dev pmid, no fold fit
