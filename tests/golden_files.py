"""Compare output with a golden file; regenerate only when asked.

Set ``STRATABENCH_REGENERATE_GOLDEN=1`` to rewrite golden files from the
current output, then review the diff before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"


def assert_golden(relative: str, actual: str) -> None:
    path = GOLDEN / relative
    if os.environ.get("STRATABENCH_REGENERATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"no golden file {path}; run with STRATABENCH_REGENERATE_GOLDEN=1 and review it"
    assert actual == path.read_text(encoding="utf-8"), f"output differs from {path}"
