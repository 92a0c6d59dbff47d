"""DATA_DIR growth over 20 library-only runs (extractive engine, embedded Chroma), measured with ``du``.

Prints the size of DATA_DIR (and of its ``chroma`` and ``runs`` parts) after runs 1, 10 and 20, and after
``prune_runs`` of everything. Library: the first 60 records of ../shared/corpus/library.jsonl; questions: the first 20
dev questions. Run: ``.venv/bin/python bench/data_dir_bench.py`` (about 30 s).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import tempfile
from pathlib import Path

from _shared import SHARED

from synthesist import api
from synthesist.config import load_settings


def size(path: Path) -> int:
    if not path.exists():
        return 0
    return int(subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True, check=True).stdout.split()[0])


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        library = root / "library.jsonl"
        lines = (SHARED / "corpus" / "library.jsonl").read_text(encoding="utf-8").split("\n")[:60]
        library.write_text("\n".join(lines) + "\n", encoding="utf-8")
        questions = [json.loads(line)["question"] for line in
                     (SHARED / "corpus" / "questions_dev.jsonl").read_text(encoding="utf-8").split("\n")[:20]]
        settings = load_settings(data_dir=root / "data", http={"cache_enabled": False}, run={"max_rounds": 2})
        data = settings.data_dir
        for number, question in enumerate(questions, 1):
            await api.research(question, sources="library", libraries=[library], model="extractive",
                               settings=settings)
            if number in (1, 10, 20):
                print(f"after {number:2d} runs: DATA_DIR {size(data) / 1e6:6.2f} MB (chroma "
                      f"{size(data / 'chroma') / 1e6:6.2f} MB, runs {size(data / 'runs') / 1e6:5.2f} MB)", flush=True)
        outcome = api.prune_runs(0, settings=settings)
        print(f"after prune_runs(0): DATA_DIR {size(data) / 1e6:6.2f} MB ({len(outcome.removed_runs)} runs removed, "
              f"{len(outcome.dropped_collections)} collections dropped)")


if __name__ == "__main__":
    asyncio.run(main())
