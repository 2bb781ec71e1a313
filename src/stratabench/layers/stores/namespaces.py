"""How stratabench names what it writes in a store, and how it recognises those names again.

Every run keeps what it writes inside namespaces of its own. The writer and
the reader of that name format live here together:

- :func:`new_run_id` makes a run id (``20261121-054500-3f2a``; the API's
  runs use ``local``);
- :func:`cell_namespace` makes a cell's namespace from it,
  ``{run id}.{suite}.{10 hex digits of the cell's name}``;
- a store turns a namespace into its own names: :func:`key_prefix` for
  key/value servers (``sb:{namespace}:``), :func:`namespace_identifier` for
  SQL tables, MongoDB databases and collections (``stratabench_{...}``);
- ``stratabench clean`` finds exactly those shapes again
  (:data:`RUN_NAMESPACE_PATTERN`, :data:`RUN_IDENTIFIER_PATTERN`), opening a
  store in :data:`SWEEP_NAMESPACE`, and every drop checks its name first
  (:func:`swept_name`).

So the keys of a run start ``sb:20261121-054500-3f2a.matrix.`` and its tables
``stratabench_20261121_054500_3f2a_matrix_`` (and end with a hash).

The treestore study's datastore (:mod:`stratabench.systems.treestore`) is a
system under test with backends of its own, not store plugins: a worker's
namespace is :func:`treestore_namespace` (``20261121_054500_3f2a_redis_1000_ss``),
under which its Redis backend writes keys ``sbts:{namespace}:...`` and its
MongoDB backend databases ``sbts_{namespace}_running`` and
``sbts_{namespace}_operational``. The system imports none of this package, so
those two formats are repeated here for the sweep
(:data:`TREESTORE_KEY_PATTERN`, :data:`TREESTORE_DATABASE_PATTERN`), and a
test holds them to the backends' own names. Nothing else is ever swept.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets

from stratabench.errors import UsageError
from stratabench.options import RunOptions

__all__ = [
    "NAMESPACE_PATTERN",
    "RUN_IDENTIFIER_PATTERN",
    "RUN_NAMESPACE_PATTERN",
    "SWEEP_NAMESPACE",
    "TREESTORE_DATABASE_PATTERN",
    "TREESTORE_KEY_PATTERN",
    "TREESTORE_NAMESPACE_PATTERN",
    "cell_namespace",
    "key_prefix",
    "namespace_identifier",
    "new_run_id",
    "swept_name",
    "treestore_namespace",
]


def new_run_id() -> str:
    """Time-ordered and unique: ``20261121-054500-3f2a`` (the shape :data:`RUN_NAMESPACE_PATTERN` expects)."""
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


# Compiled here, at import: a run's zygote imports this module once, and each worker it forks then finds them
# compiled, where ``re``'s own cache, empty in the zygote, compiled them again in every visit (0.5-1 ms each).
_NOT_IN_NAMESPACE = re.compile(r"[^A-Za-z0-9_.-]")
_NOT_IN_IDENTIFIER = re.compile(r"[^a-z0-9_]")


def cell_namespace(options: RunOptions, suite: str, cell: str) -> str:
    """``{run id}.{suite}.{hash of the cell name}``: unique per run and cell, valid for every store."""
    digest = hashlib.sha1(cell.encode()).hexdigest()[:10]
    run = _NOT_IN_NAMESPACE.sub("_", options.run_id)[:60]
    return f"{run}.{suite}.{digest}"


NAMESPACE_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
"""What a namespace may be: no ``:``, so that one namespace's key prefix can
never be the beginning of another's, and nothing a SQL identifier or a file
name would have to quote."""


_RUN_ID = r"(?:\d{8}-\d{6}-[0-9a-f]{4}|local)"
# namespace_identifier() lowercases, turns "-" and "." into "_", may cut the
# middle short to fit, and always ends with "_" + 8 hex digits of a hash.
_RUN_ID_IDENTIFIER = r"(?:\d{8}_\d{6}_[0-9a-f]{4}|local)"

RUN_NAMESPACE_PATTERN = re.compile(rf"^{_RUN_ID}\.[a-z][a-z0-9_]*\.[0-9a-f]{{10}}$")
"""A namespace a run made for a cell: ``{run id}.{suite}.{cell hash}``, as
:func:`cell_namespace` builds it, for the run ids of the
command line (``20261121-054500-3f2a``) and the API's default (``local``);
nothing else is ever swept."""

RUN_IDENTIFIER_PATTERN = re.compile(rf"^stratabench_{_RUN_ID_IDENTIFIER}_[a-z0-9_]*_[0-9a-f]{{8}}$")
""":func:`namespace_identifier` of a run namespace: the table, collection or
database names that are swept."""

def treestore_namespace(run_id: str, backend: str, n: int, state: str, core: str) -> str:
    """A treestore worker's namespace: ``{run id}_{backend}_{N}_{state}{core}``, at most 40 characters.

    Lowercase letters, digits and ``_`` (what every tree backend accepts in
    its names). The run id is cut to 20 characters, and the backend to what
    is left: the state mode's and the core's letters always stay, since the
    workers of both cores run side by side in one round (cutting the end
    instead gave ``sqlite@disk``'s two cores one file at N = 100,000).
    """
    run = re.sub(r"[^a-z0-9]", "_", run_id.lower())[:20]
    tail = f"_{n}_{state[0]}{core[0]}"
    tag = re.sub(r"[^a-z0-9]", "", backend)[: min(11, 40 - len(run) - 1 - len(tail))]
    return f"{run}_{tag}{tail}"


# treestore_namespace() of a command-line or API run id. Runs before the backend was cut instead of the
# end could leave a shorter tail (``..._100000_``, ``..._100000_s``), which is still swept.
_TREESTORE = rf"{_RUN_ID_IDENTIFIER}_[a-z0-9]{{1,11}}_[0-9]+(?:_[a-z]{{0,2}})?"

TREESTORE_NAMESPACE_PATTERN = re.compile(rf"^{_TREESTORE}$")
"""A namespace :func:`treestore_namespace` made for a run."""

TREESTORE_KEY_PATTERN = re.compile(rf"^sbts:{_TREESTORE}$")
"""``sbts:{namespace}``: the key prefix (before ``:``) of a treestore run's keys in Redis, as swept."""

TREESTORE_DATABASE_PATTERN = re.compile(rf"^sbts_{_TREESTORE}_(?:running|operational)$")
"""A treestore run's MongoDB databases, one per datastore."""

SWEEP_NAMESPACE = "stratabench-sweep"
"""The namespace a store is opened in to sweep (it is never written)."""


def swept_name(name: str, pattern: re.Pattern[str]) -> str:
    """``name`` if it has the shape of a run's namespace (``pattern``), else :class:`UsageError`.

    The check every :meth:`Sweepable.drop_namespace` makes first: it keeps
    a drop to the tool's own names, and a quoted SQL name free of quotes.
    """
    if not pattern.match(name):
        raise UsageError(f"{name!r} is not a namespace of a stratabench run; nothing dropped")
    return name


def namespace_identifier(namespace: str, *, max_length: int = 63) -> str:
    """The SQL table or database name for ``namespace``: ``stratabench_{namespace}``.

    Lowercase letters, digits and ``_`` only, at most ``max_length``
    characters (PostgreSQL's limit is 63). When the namespace had to be
    changed to fit, a short hash of the original is appended, so two
    namespaces never share a table.
    """
    cleaned = _NOT_IN_IDENTIFIER.sub("_", namespace.lower())
    name = f"stratabench_{cleaned}"
    if cleaned != namespace or len(name) > max_length:
        digest = hashlib.sha1(namespace.encode()).hexdigest()[:8]
        name = f"{name[: max_length - 9]}_{digest}"
    return name


def key_prefix(namespace: str) -> bytes:
    """``sb:{namespace}:``: what every key of ``namespace`` starts with in a key/value server.

    Clients that write a store's keys without its plugin (the Go load
    clients) name them with this, so that the plugin's cleanup finds them.
    """
    return f"sb:{namespace}:".encode()
