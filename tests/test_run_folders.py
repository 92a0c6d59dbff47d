"""Runs kept on disk: a finished run drops its store collection; list and prune manage the rest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from run_helpers import QUESTION, write_library

from synthesist import api
from synthesist.composition import Seams, Shared  # noqa: E402
from synthesist.config import load_settings  # noqa: E402
from synthesist.errors import BadInputError  # noqa: E402
from synthesist.memory import Embedder, open_chroma, run_collections  # noqa: E402
from synthesist.memory.run_collection import run_collection_name  # noqa: E402
from synthesist.memory.store import open_collection  # noqa: E402
from synthesist.runs import parse_duration  # noqa: E402


@pytest.fixture
def persistent(tmp_path: Path, own_store: None):
    """The default store: the data directory's own (its run collections and segment folders are what prune clears)."""
    return load_settings(data_dir=tmp_path / "data", run={"max_rounds": 1})


async def test_a_finished_run_keeps_its_files_but_not_a_live_collection(persistent, embedder: Embedder,
                                                                          tmp_path: Path) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    shared = Shared(client=open_chroma(persistent), embedder=embedder)
    result = await api.research(QUESTION, sources="library", libraries=[library], model="extractive",
                                settings=persistent, seams=Seams(shared=shared))
    assert result.run_id not in run_collections(shared.client)
    folder = persistent.data_dir / "runs" / result.run_id
    assert {p.name for p in folder.iterdir()} >= {"checkpoint.json", "events.jsonl", "report.json", "report.md"}
    (listed,) = api.list_runs(settings=persistent)
    assert (listed.run_id, listed.stop_reason, listed.finished) == (result.run_id, result.stop_reason, True)
    assert listed.question == QUESTION and listed.size_bytes > 0


def test_prune_removes_old_runs_their_collections_and_orphans(persistent, tmp_path: Path) -> None:
    client = open_chroma(persistent)
    runs = persistent.data_dir / "runs"
    for run_id in ("old-killed", "fresh-killed"):
        (runs / run_id).mkdir(parents=True)
        (runs / run_id / "checkpoint.json").write_text('{"round": 1, "finished": false, "options": {}}')
        open_collection(client, run_collection_name(run_id))
    open_collection(client, run_collection_name("orphan"))  # its folder is long gone
    old = runs / "old-killed" / "checkpoint.json"
    os.utime(old, (old.stat().st_atime - 10 * 86400, old.stat().st_mtime - 10 * 86400))

    outcome = api.prune_runs("7d", settings=persistent)
    assert outcome.removed_runs == ("old-killed",)
    assert set(outcome.dropped_collections) == {"old-killed", "orphan"}
    assert set(run_collections(client)) == {"fresh-killed"}  # a recent unfinished run can still be resumed
    assert [run.run_id for run in api.list_runs(settings=persistent)] == ["fresh-killed"]


def test_prune_in_a_shared_store_leaves_the_other_data_directories_runs(tmp_path: Path, own_store: None) -> None:
    """Two data directories name one store home (``memory.store_home``): a prune in one removes its own old runs and
    never takes the other's run collections for orphans, a live run's included."""
    home = tmp_path / "store"
    mine, theirs = (load_settings(data_dir=tmp_path / name, memory={"store_home": home}) for name in ("a", "b"))
    client = open_chroma(mine)
    old = mine.data_dir / "runs" / "old-finished"
    old.mkdir(parents=True)
    (old / "checkpoint.json").write_text('{"round": 1, "finished": true, "options": {}}')
    os.utime(old / "checkpoint.json", (0, 0))
    open_collection(client, run_collection_name("old-finished"))
    open_collection(open_chroma(theirs), run_collection_name("theirs-running"))

    outcome = api.prune_runs("7d", settings=mine)
    assert outcome.removed_runs == ("old-finished",)
    assert set(run_collections(client)) == {"theirs-running"}


@pytest.mark.parametrize(("text", "seconds"), [("30s", 30), ("15m", 900), ("12h", 43200), ("7d", 604800),
                                               ("2w", 1209600), ("1.5h", 5400)])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_a_bad_duration_is_bad_input() -> None:
    with pytest.raises(BadInputError, match="not a duration"):
        parse_duration("seven days")
