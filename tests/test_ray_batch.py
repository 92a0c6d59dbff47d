"""Batch on a real local Ray cluster: questions as Ray tasks, one rate budget, results in the batch layout."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest
from listening import family, listeners
from run_helpers import LIBRARY_ITEMS, QUESTION, run_settings, write_library

if importlib.util.find_spec("ray") is None:  # pragma: no cover
    pytest.skip("Ray is not installed", allow_module_level=True)
if not Path("/proc").is_dir():  # pragma: no cover
    pytest.skip("the worker-kill test reads /proc (Linux)", allow_module_level=True)

from synthesist.api import open_library_index  # noqa: E402
from synthesist.batch import research_many, result_path  # noqa: E402
from synthesist.composition import Seams, embedder_for, open_shared  # noqa: E402
from synthesist.memory.documents import head_text  # noqa: E402
from synthesist.testing import FixtureServer, Reply  # noqa: E402

FIXTURES = Path(__file__).parent / "tools" / "fixtures"
# Ray itself (``import ray``, and synthesist.ray_cluster, which imports it) is imported by the tests, not at
# collection, which every pytest worker does


def _pubmed(server: FixtureServer, data: Path, rate: float):  # type: ignore[no-untyped-def]
    """Serve PubMed's recorded answers; the settings of a one-round run against them at ``rate`` per second."""
    server.route("/eutils/esearch.fcgi", Reply.file(FIXTURES / "pubmed_esearch.json"))
    server.route("/eutils/efetch.fcgi", Reply.file(FIXTURES / "pubmed_efetch.xml"))
    settings = run_settings(data, max_rounds=1)
    return settings.model_copy(update={
        "pubmed": settings.pubmed.model_copy(update={"base_url": server.url + "/eutils", "rate_per_second": rate}),
        "http": settings.http.model_copy(update={"cache_enabled": False})})


@pytest.fixture(scope="module")
def cluster():  # type: ignore[no-untyped-def]
    import ray  # noqa: PLC0415

    from synthesist.ray_cluster import start_local_cluster  # noqa: PLC0415

    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    start_local_cluster(num_cpus=2)  # as `--backend ray` without `--address` starts one
    yield
    ray.shutdown()


def test_the_local_cluster_listens_on_loopback_only(cluster) -> None:  # type: ignore[no-untyped-def]
    import ray  # noqa: PLC0415

    worker = ray.get(ray.remote(lambda: os.getpid()).remote())  # a worker is up (each listens for its callers)
    found = listeners(os.getpid())  # this process is the driver: the cluster's processes are below it
    listening = {listener.pid for listener in found} | {listener.name for listener in found}
    assert {os.getpid(), worker, "gcs_server", "raylet"} <= listening, found
    assert [listener for listener in found if not listener.loopback] == []


def test_the_local_clusters_workers_run_at_the_drivers_priority(cluster) -> None:  # type: ignore[no-untyped-def]
    import ray  # noqa: PLC0415

    # Ray's default niceness (15) starved the workers, which do all of a batch's work, beside any busy process
    assert ray.get(ray.remote(lambda: os.nice(0)).remote()) == os.nice(0)


async def test_a_batch_runs_as_ray_tasks_and_resumes_like_a_local_one(cluster, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    library = write_library(tmp_path / "papers.jsonl")
    settings = run_settings(tmp_path / "data", max_rounds=1)
    questions = [QUESTION, "Does metformin improve survival after breast cancer?", "   "]
    seen: list[int] = []
    items = await research_many(questions, out_dir=tmp_path / "out", backend="ray", settings=settings,
                                sources="library", libraries=[library], model="extractive",
                                on_item=lambda item: seen.append(item.index))
    assert [item.index for item in items] == [0, 1, 2] and sorted(seen) == [0, 1, 2]
    assert items[0].result is not None and items[0].result.report.answer is not None
    assert items[1].result is not None and items[0].path == result_path(tmp_path / "out", 0, QUESTION)
    assert items[2].error is not None and "the question is empty" in items[2].error  # recorded, not lost
    again = await research_many(questions[:2], out_dir=tmp_path / "out", backend="local", settings=settings,
                                sources="library", libraries=[library], model="extractive")
    assert all(item.resumed for item in again)  # the same files: either backend resumes the other's batch


async def test_the_rate_budget_holds_across_workers(cluster, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with FixtureServer() as server:
        settings = _pubmed(server, tmp_path / "data", rate=4)
        questions = [f"{QUESTION} (variant {i})" for i in range(6)]
        await research_many(questions, out_dir=tmp_path / "out", backend="ray", settings=settings,
                            sources="pubmed", model="extractive")
        arrivals = sorted(r.at for r in server.requests if r.path.startswith("/eutils"))
    assert len(arrivals) >= 12
    # never more than 4 requests in any one-second window, whichever worker sent them
    assert max(sum(1 for t in arrivals if start <= t < start + 1.0) for start in arrivals) <= 4


def test_the_cli_runs_a_batch_on_ray(tmp_path: Path) -> None:
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    library = write_library(tmp_path / "papers.jsonl")
    questions = tmp_path / "questions.txt"
    questions.write_text(f"{QUESTION}\n")
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(tmp_path / "data"), "SYNTHESIST_MEMORY__CHROMA_MODE": "ephemeral"}
    done = subprocess.run([sys.executable, "-m", "synthesist.cli", "batch", str(questions), "--out",
                           str(tmp_path / "out"), "--backend", "ray", "--sources", "library", "--library",
                           str(library), "--max-rounds", "1", "--json"], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"stop_reason"' in done.stdout and result_path(tmp_path / "out", 0, QUESTION).exists()


def _task_worker(deadline: float, skip: set[int]) -> int | None:
    """The pid of a worker of this process's cluster running a research task (Ray titles it
    ray::_research_task), none in ``skip``. Only this process's descendants: the other pytest worker may be running
    a batch on its own cluster meanwhile, and its workers carry the same title."""
    import time  # noqa: PLC0415

    while time.monotonic() < deadline:
        for pid in family(os.getpid()):
            if pid in skip:
                continue
            try:
                cmdline = (Path("/proc") / str(pid) / "cmdline").read_bytes()
            except OSError:
                continue
            if b"_research_task" in cmdline:
                return pid
        time.sleep(0.05)
    return None


@pytest.mark.parametrize("kills", [1, 2])
async def test_a_killed_worker_costs_one_retry_and_two_kills_a_recorded_failure(cluster, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                               kills: int) -> None:
    import asyncio  # noqa: PLC0415
    import signal  # noqa: PLC0415
    import threading  # noqa: PLC0415
    import time  # noqa: PLC0415

    killed: list[int | None] = []
    with FixtureServer(latency=2.0) as server:  # each PubMed answer takes 2 s: time to kill the worker mid-question
        settings = _pubmed(server, tmp_path / "data", rate=50)

        def killer() -> None:
            for _ in range(kills):
                # A worker this thread has not killed yet: a killed one stays in /proc for a moment, and requests
                # its searches sent just before the kill may still be arriving
                pid = _task_worker(time.monotonic() + 120, skip={pid for pid in killed if pid})
                if pid is None:
                    killed.append(None)
                    return
                before, deadline = len(server.requests), time.monotonic() + 120
                while len(server.requests) == before and time.monotonic() < deadline:  # this attempt's search
                    time.sleep(0.05)
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)

        thread = threading.Thread(target=killer)
        thread.start()
        items = await research_many([QUESTION], out_dir=tmp_path / "out", backend="ray", settings=settings,
                                    sources="pubmed", model="extractive")
        await asyncio.to_thread(thread.join, 60)
    assert len(killed) == kills and all(killed) and len(set(killed)) == kills  # two attempts, two processes
    if kills == 1:
        assert items[0].result is not None and items[0].error is None  # retried once, on another worker
    else:
        assert items[0].result is None and "failed on Ray after 2 attempts" in (items[0].error or "")


def test_library_chunks_are_embedded_by_ray_workers_as_the_local_model_would(cluster, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from synthesist.ray_cluster import embed_on_ray  # noqa: PLC0415

    settings = run_settings(tmp_path / "data")
    texts = [head_text(item) for item in LIBRARY_ITEMS] * 3
    chunks = list(embed_on_ray(texts, settings=settings, address=None, chunk=4))
    assert sorted(start for start, _ in chunks) == list(range(0, len(texts), 4))  # every chunk, once
    vectors = np.zeros((len(texts), 384), dtype=np.float32)
    for start, part in chunks:
        vectors[start:start + len(part)] = part
    local = embedder_for(settings).embed_sync(texts)
    # The same model and backend in another process: onnx-int8 scales activations per batch, so a text's vector
    # varies slightly with the chunk it was encoded in (tests/memory/test_onnx_backend.py: cosine > 0.985)
    assert np.sum(vectors * local, axis=1).min() > 0.985


def test_a_library_index_built_over_ray_matches_a_local_build(cluster, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    library = write_library(tmp_path / "papers.jsonl")
    settings = run_settings(tmp_path / "data")
    shared = open_shared(settings)
    index = open_library_index([library], settings=settings, seams=Seams(shared=shared), backend="ray")
    assert shared.embedder.encoded_count == 0  # the driver embedded no record: the workers did
    assert index.stats.embedded == index.stats.total == len(LIBRARY_ITEMS)
    local = open_library_index([library], settings=run_settings(tmp_path / "local"), backend="local")
    query = "metformin breast cancer risk"
    ray_hits, local_hits = index.search(query, k=5), local.search(query, k=5)
    assert [h.id for h in ray_hits] == [h.id for h in local_hits]
    assert [round(h.score, 5) for h in ray_hits] == [round(h.score, 5) for h in local_hits]
    again = open_library_index([library], settings=settings, seams=Seams(shared=shared), backend="ray")
    assert again.stats.embedded == 0 and again.stats.reused == len(LIBRARY_ITEMS)  # nothing is embedded twice


def test_the_cli_indexes_a_library_on_ray(tmp_path: Path) -> None:
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    library = write_library(tmp_path / "papers.jsonl")
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(tmp_path / "data")}
    command = [sys.executable, "-m", "synthesist.cli", "library", "index", str(library), "--backend", "ray"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{len(LIBRARY_ITEMS)} records indexed: {len(LIBRARY_ITEMS)} embedded, 0 reused" in done.stdout
    again = subprocess.run(command[:-2], capture_output=True, text=True, env=env, timeout=300)  # local, same store
    assert again.returncode == 0 and f"0 embedded, {len(LIBRARY_ITEMS)} reused" in again.stdout


async def test_a_batch_on_the_default_persistent_store_leaves_the_library_searchable(cluster, tmp_path: Path,
                                                                                   own_store: None) -> None:  # type: ignore[no-untyped-def]
    from synthesist.api import check_store  # noqa: PLC0415
    from synthesist.config import load_settings  # noqa: PLC0415

    library = write_library(tmp_path / "papers.jsonl")
    settings = load_settings(data_dir=tmp_path / "data", search={"max_results": 10}, run={"max_rounds": 1})
    assert settings.memory.chroma_mode == "persistent"  # the default: the data directory's own Chroma server
    questions = [QUESTION, "Does metformin improve survival after breast cancer?",
                 "Is metformin linked to lower cancer incidence?", "Does metformin act through AMPK?"]
    options = {"sources": "library", "libraries": [library], "model": "extractive", "settings": settings}
    on_ray = await research_many(questions, out_dir=tmp_path / "ray", backend="ray", **options)
    assert all(item.result is not None for item in on_ray), [item.error for item in on_ray]
    # the workers wrote one store through one server: it reads back, and nothing is embedded again
    index = open_library_index([library], settings=settings)
    assert index.stats.embedded == 0 and index.stats.reused == index.stats.total == len(LIBRARY_ITEMS)
    assert index.search("metformin breast cancer", k=3)
    health = check_store(settings=settings)
    assert health.healthy and any(item.name.startswith("library-") for item in health.collections)
    local = await research_many(questions, out_dir=tmp_path / "local", backend="local", **options)
    for remote, here in zip(on_ray, local, strict=True):  # the same results as a local batch
        assert remote.result.report.answer == here.result.report.answer
        assert sorted(e.id for e in remote.result.evidence) == sorted(e.id for e in here.result.evidence)
