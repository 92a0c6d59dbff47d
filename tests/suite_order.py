"""The order the suite's modules start in (``tests/conftest.py`` sorts the collection by it)."""

from __future__ import annotations

LONGEST_FIRST = (
    "tests/test_report_shape.py", "tests/test_cli.py", "tests/test_ray_batch.py", "tests/test_shared_store.py",
    "tests/test_store_stuck.py", "tests/memory/test_store_damage.py", "tests/agents/visual/test_cxr_tools.py",
    "tests/test_watch.py", "tests/memory/test_owner.py", "tests/reading/test_learned_reader.py",
    "tests/memory/test_onnx_backend.py", "tests/test_full_disk.py", "tests/test_store_heals.py",
)
"""The modules that take longest (each 20 s to 3 min of a worker with one core busy: ``make test``'s durations), in
that order, ahead of every other module: with ``--no-loadscope-reorder`` the workers take modules in collection
order, and a long module left to the end (test_report_shape's research runs) kept one worker busy for minutes while
the other had nothing left to run."""

NOT_AT_COLLECTION = ("torch", "transformers", "ray", "anthropic", "openai", "scipy.optimize")
"""What no test module imports at its top: every pytest worker collects (imports) every module, and these were 8 of
a worker's 17 s of collection (2026-12-03). The tests that use them import them inside."""
