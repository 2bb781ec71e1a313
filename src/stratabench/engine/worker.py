"""``python -m stratabench.engine.worker REQUEST RESULT``: measure one cell (``-``: the request on stdin)."""

from __future__ import annotations

import sys

from stratabench.engine.cell import worker_main

if __name__ == "__main__":
    sys.exit(worker_main(sys.argv[1:]))
