"""Chest X-ray expert tools: load time, latency per call and peak RSS of each tool, on this machine's cores.

Run with ``.venv/bin/python bench/cxr_bench.py [WEIGHTS_DIR]``. Without a weights folder, weights of UNTRAINED
networks in the published layout are written to a temporary folder (same architectures, so the same cost; the
outputs mean nothing). Each tool is measured in its own child process, so its peak RSS is its own: Python, torch,
the network and one call. Images: the three shared chest X-rays (../shared/images, or $SYNTHESIST_SHARED).
Prints one line per figure; docs/benchmarks.md records a run.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _shared import SHARED, require

IMAGES = ("00000001_000.png", "00027426_000.png", "16747_3_1.jpg")
REPEATS = 3


def figure(name: str, value: str) -> None:
    print(f"{name:<52} {value}", flush=True)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def measure(tool: str, weights_dir: Path) -> dict:
    """In this process: load the tool, call it once per image (first call), then REPEATS more times each."""
    import torch

    from synthesist.tools.imaging import ImageManager
    from synthesist.tools.imaging.cxr import load_cxr_tools

    torch.set_num_threads(os.cpu_count() or 1)
    baseline = peak_rss_mb()
    start = time.perf_counter()
    tools = load_cxr_tools(weights_dir)
    load = time.perf_counter() - start
    if tool not in tools.tools:
        raise SystemExit(f"{tool} not offered: {tools.notice}")
    arguments = {"overlay": True} if tool == "segment_anatomy" else {}
    first, warm = [], []
    for name in IMAGES:
        manager = ImageManager.open(SHARED / "images" / name, max_pixels=10**8, max_bytes=10**8)
        for repeat in range(REPEATS + 1):
            manager.reset()
            start = time.perf_counter()
            tools.tools[tool].run(manager, arguments)
            (first if repeat == 0 else warm).append(time.perf_counter() - start)
    return {"tool": tool, "threads": torch.get_num_threads(), "import_rss_mb": baseline, "load_s": load,
            "first_s": first, "warm_median_s": statistics.median(warm), "warm_max_s": max(warm),
            "peak_rss_mb": peak_rss_mb()}


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        tool, weights_dir = sys.argv[2].split("@", 1)
        print(json.dumps(measure(tool, Path(weights_dir))))
        return
    require(*(f"images/{name}" for name in IMAGES))
    figure("machine", f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
           f"python {platform.python_version()}")
    figure("load average at start (1, 5, 15 min)", ", ".join(f"{v:.1f}" for v in os.getloadavg()))
    with tempfile.TemporaryDirectory(prefix="cxr-bench-") as scratch:
        weights_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(scratch)
        if len(sys.argv) == 1:
            from synthesist.testing.cxr_weights import write_untrained_weights

            start = time.perf_counter()
            write_untrained_weights(weights_dir)
            figure("untrained weights written", f"{time.perf_counter() - start:.1f} s (outputs mean nothing)")
        for path in sorted(weights_dir.iterdir()):
            figure(f"weights file {path.name[:40]}", f"{path.stat().st_size / 1e6:.0f} MB")
        for tool in ("classify_pathologies", "segment_anatomy"):
            child = subprocess.run([sys.executable, __file__, "--child", f"{tool}@{weights_dir}"],
                                   capture_output=True, text=True, check=True)
            result = json.loads(child.stdout.strip().splitlines()[-1])
            figure(f"{tool}: threads", str(result["threads"]))
            figure(f"{tool}: load_cxr_tools (both networks)", f"{result['load_s']:.2f} s")
            figure(f"{tool}: first call per image", ", ".join(f"{s:.2f}" for s in result["first_s"]) + " s")
            figure(f"{tool}: warm call, median / max of {REPEATS * len(IMAGES)}",
                   f"{result['warm_median_s']:.2f} / {result['warm_max_s']:.2f} s")
            figure(f"{tool}: peak RSS, both loaded (imports: {result['import_rss_mb']:.0f} MB)",
                   f"{result['peak_rss_mb']:.0f} MB")


if __name__ == "__main__":
    main()
