"""Where the benches find ``../shared`` (the library, the dev questions, the X-rays), or ``$SYNTHESIST_SHARED``.

The benches run as scripts (``python bench/NAME.py``), so this folder is on ``sys.path`` and they import it as
``_shared``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("SYNTHESIST_SHARED") or REPO.parent / "shared")


def require(*relative: str) -> Path:
    """:data:`SHARED`, after checking each ``relative`` path is in it; a clear exit (status 2) when one is not."""
    missing = [name for name in relative if not (SHARED / name).exists()]
    if missing:
        print(f"{', '.join(missing)} not found in {SHARED} (set SYNTHESIST_SHARED)", file=sys.stderr)
        raise SystemExit(2)
    return SHARED
