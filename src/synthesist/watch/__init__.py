"""Watched questions: stored with their options, run again on demand (a scheduler's job, no daemon of ours), and
compared with their previous run. See docs/architecture/watches.md."""

from .changes import WatchChanges, compare, render_markdown, summary
from .runner import WatchOutcome, run_watch, run_watches
from .store import Watch, WatchListing, WatchOptions, WatchStore

__all__ = ["Watch", "WatchChanges", "WatchListing", "WatchOptions", "WatchOutcome", "WatchStore", "compare",
           "render_markdown", "run_watch", "run_watches", "summary"]
