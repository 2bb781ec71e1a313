"""``stratabench clean --store URL [--dry-run]``: remove what killed runs left in a store.

Every run keeps its keys and tables in namespaces of its own and removes
them when each cell ends; a run killed with SIGKILL, or a server that hung
until the cell timed out, leaves them behind. ``clean`` lists the
namespaces of runs in the store (by their shape: see
:mod:`stratabench.layers.stores.namespaces`), the treestore study's keys and
databases among them, and drops them, and only them: it
never touches a key, table or collection outside the tool's own names.
``--dry-run`` lists them and removes nothing. Stores that cannot list their
namespaces (memcached) say so and what happens instead. First, the seconds
a ``kill -9`` of ``stratabench load`` left on disk become a partial cell in
a new results file (:mod:`stratabench.load.recovery`), as the next ``load``
or ``run`` would do.

Run it when no stratabench run is using the store: a run in progress has
namespaces too.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from stratabench.layers.stores import check_store_url, open_store
from stratabench.layers.stores.base import Sweepable
from stratabench.layers.stores.namespaces import SWEEP_NAMESPACE
from stratabench.load.recovery import recover_killed_loads

__all__ = ["add_parser", "clean", "handle"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "clean",
        help="remove the keys and tables that interrupted runs left in a store",
        description="Find every namespace stratabench runs left in a store (keys sb:RUN_ID.* and the treestore "
        "study's sbts:RUN_ID_*, tables and databases stratabench_RUN_ID_* and sbts_RUN_ID_*) and remove them, "
        "and nothing else. Use it after a run was killed.",
    )
    parser.add_argument("--store", action="append", required=True, metavar="URL",
                        help="the store to clean, as given to run --store (repeatable)")
    parser.add_argument("--dry-run", action="store_true", help="only list what would be removed")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    return clean(args.store, dry_run=args.dry_run)


def clean(urls: Sequence[str], *, dry_run: bool = False) -> int:
    """List, and unless ``dry_run`` drop, the run namespaces in each store of ``urls``.

    Prints one line per store and one per namespace (URLs redacted).
    Returns 0; a store that cannot be reached raises
    :class:`~stratabench.errors.StoreError` before anything is removed there.
    """
    for url in urls:  # every URL is checked before any store is touched: a typo in the last cleans nothing
        check_store_url(url)
    # What a killed load measured, kept before anything else is (the store is not needed for it).
    for line in [] if dry_run else recover_killed_loads("stratabench clean"):
        print(line, file=sys.stderr)
    for url in urls:
        with open_store(url, namespace=SWEEP_NAMESPACE, sweeping=True) as store:
            if not isinstance(store, Sweepable):
                print(f"{store.redacted_url}: nothing to clean: {store.unswept_note}")
                continue
            names = store.list_namespaces()
            plural = "" if len(names) == 1 else "s"
            if not names:
                print(f"{store.redacted_url}: no namespaces of stratabench runs")
                continue
            print(f"{store.redacted_url}: {len(names)} namespace{plural} of stratabench runs"
                  + (" (dry run: nothing removed)" if dry_run else ""))
            for name in names:
                if not dry_run:
                    store.drop_namespace(name)
                print(f"  {'would remove' if dry_run else 'removed'} {name}")
    return 0
