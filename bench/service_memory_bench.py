"""The service's resident memory over many finished runs: does `synthesist serve` give back what a run used?

    python bench/service_memory_bench.py [RUNS] [--chroma persistent|ephemeral]

A real `synthesist serve` process (the default persistent store unless told otherwise) over a 1,100-record library
runs RUNS questions (default 40) one after another through its HTTP API (extractive, library only, one round). After
each run the service's RSS is read from /proc. Printed: the RSS after the first run, after the last, and the growth
per run over the second half (after warm-up: caches, the allocator's arenas and the embedder's buffers grow early
and then stay), and the owner and `chroma run` processes' RSS when the store is persistent. A leak shows as a
steady second-half slope; warm-up as a flat one.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from store_processes import wait_until_stopped, write_big_library  # noqa: E402

QUESTIONS = ("Do statins prevent atrial fibrillation?", "Does aspirin lower stroke mortality?",
             "Does exercise reduce heart failure in elderly patients?", "Does metformin lower cancer incidence?",
             "Is vitamin D supplementation associated with fewer fractures?")


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _run(client: httpx.Client, question: str) -> None:
    started = client.post("/api/runs", json={"question": question, "sources": ["library"], "max_rounds": 1})
    started.raise_for_status()
    run_id = started.json()["run_id"]
    while (reply := client.get(f"/api/runs/{run_id}")).status_code == 409:
        time.sleep(0.2)
    reply.raise_for_status()


def main(runs: int, chroma: str) -> None:
    with tempfile.TemporaryDirectory() as root:
        data_dir = Path(root) / "data"
        library = write_big_library(Path(root) / "library.jsonl", records=1100)
        port = _free_port()
        env = {**os.environ, "SYNTHESIST_DATA_DIR": str(data_dir), "SYNTHESIST_MEMORY__CHROMA_MODE": chroma}
        service = subprocess.Popen([sys.executable, "-m", "synthesist.cli", "serve", "--port", str(port),
                                    "--library", str(library)], env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120, trust_env=False) as client:
                for _ in range(600):
                    try:
                        if client.get("/api/health").status_code == 200:
                            break
                    except httpx.HTTPError:
                        time.sleep(0.2)
                rss = []
                for i in range(runs):
                    _run(client, QUESTIONS[i % len(QUESTIONS)])
                    rss.append(_rss_mb(service.pid))
            half = runs // 2
            slope = (rss[-1] - rss[half - 1]) / (runs - half) if runs > 1 else float("nan")
            print(f"{'service RSS after run 1':<44} {rss[0]:.0f} MB")
            print(f"{'service RSS after run ' + str(half):<44} {rss[half - 1]:.0f} MB")
            print(f"{'service RSS after run ' + str(runs):<44} {rss[-1]:.0f} MB")
            print(f"{'growth per run, second half':<44} {slope:+.2f} MB")
            state_file = data_dir / "chroma-server" / "state.json"
            if state_file.exists():
                state = json.loads(state_file.read_text())
                print(f"{'store owner / chroma run RSS':<44} {_rss_mb(state['pid']):.0f} MB / "
                      f"{_rss_mb(state['server_pid']):.0f} MB")
        finally:
            service.send_signal(signal.SIGINT)
            service.wait(timeout=60)
        wait_until_stopped(data_dir)


if __name__ == "__main__":
    args = sys.argv[1:]
    mode = "persistent"
    if "--chroma" in args:
        at = args.index("--chroma")
        mode = args[at + 1]
        del args[at:at + 2]
    main(int(args[0]) if args else 40, mode)
