"""Run stratabench's Go programs (``go/cmd/...``) as subprocesses.

The Go module in ``go/`` builds two programs:

``stratabench-go``
    The Go side of the bulkload study (docs/studies/bulkload.md §4.1): it generates
    the dataset, writes each format's asset, times loading it under
    ``testing.Benchmark`` and prints one JSON object per cell on stdout.
``stratabench-mongo``
    A MongoDB-compatible test server (FerretDB on PostgreSQL, or SQLite) on a
    loopback port.

Binaries live in ``<repo>/.build/go/<name>``, or in the directory named by
the ``STRATABENCH_GO_BIN_DIR`` environment variable. Building needs the Go
toolchain (1.24 or later) on ``PATH``; running a built binary does not,
except for the ``embed`` bulkload format, which compiles Go source at run
time. Builds are named by content (:mod:`stratabench.build_cache`): a
program is rebuilt when the module's sources or the Go version changed
since its build (:func:`ensure_built`), and the embed asset's build is kept
in the cache directory under its own key (:func:`embed_cache_dir`).

Its two errors belong to the project's tree: a missing toolchain or binary
is an :class:`~stratabench.errors.UnavailableError` (the cells say so and
the rest of the run goes on), a program that fails a
:class:`~stratabench.errors.StratabenchError`.
"""

from __future__ import annotations

import collections
import json
import os
import re
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from stratabench.build_cache import cache_root, content_key
from stratabench.errors import StratabenchError, UnavailableError
from stratabench.json_lines import BadLine, json_objects
from stratabench.lifeline import parent_death_signal

__all__ = [
    "BIN_DIR_ENV",
    "GO_DIR",
    "PROGRAMS",
    "GoRunError",
    "GoUnavailableError",
    "binary_path",
    "build",
    "decode_hash",
    "embed_cache_dir",
    "ensure_built",
    "export",
    "go_available",
    "info",
    "run_bulkload",
]

#: The repository root: this file is ``<repo>/src/stratabench/adapters/golang.py``.
REPO_ROOT = Path(__file__).resolve().parents[3]
#: The Go module.
GO_DIR = REPO_ROOT / "go"
#: Environment variable that overrides where the binaries are.
BIN_DIR_ENV = "STRATABENCH_GO_BIN_DIR"

#: Every Go program of the module, as named in ``go/cmd/``.
PROGRAMS = ("stratabench-go", "stratabench-mongo")

_MIN_GO = (1, 24)
_INSTALL_HINT = "install Go 1.24+ from https://go.dev/dl/ or your package manager and put `go` on PATH"
# How much of a failed program's stderr goes into the error message.
_STDERR_TAIL = 20


class GoUnavailableError(UnavailableError):
    """The Go toolchain or a Go binary needed here is missing."""


class GoRunError(StratabenchError):
    """A Go build or program failed; the message ends with its stderr tail."""


def binary_path(name: str = "stratabench-go") -> Path:
    """Return where the binary ``name`` is (or will be) built.

    ``$STRATABENCH_GO_BIN_DIR/<name>`` if that variable is set, else
    ``<repo>/.build/go/<name>``. The file need not exist.
    """
    override = os.environ.get(BIN_DIR_ENV)
    base = Path(override) if override else REPO_ROOT / ".build" / "go"
    return base / name


def _go_version_text(go: str) -> str | None:
    """``go env GOVERSION``: ``go1.24.2``; ``None`` when it fails."""
    try:
        return subprocess.run(
            [go, "env", "GOVERSION"], capture_output=True, text=True, timeout=60, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def _go_version(go: str) -> tuple[int, ...] | None:
    m = re.match(r"go(\d+)\.(\d+)", _go_version_text(go) or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def _source_key(*parts: str) -> str:
    """The content key of the Go module's sources, the Go toolchain's version and ``parts``."""
    go = shutil.which("go")
    version = (_go_version_text(go) if go else None) or "no go"
    sources = [path for path in GO_DIR.rglob("*") if path.is_file() and (path.suffix == ".go" or path.name in ("go.mod", "go.sum"))]
    return content_key((version, *parts), sources, root=GO_DIR)


def embed_cache_dir(size: int, seed: int) -> Path:
    """Where the bulkload embed asset's build of ``size`` records from ``seed`` is cached (may not exist yet)."""
    return cache_root() / "go-embed" / _source_key(f"size={size}", f"seed={seed}")


def _key_file(binary: Path) -> Path:
    return binary.with_name(binary.name + ".key")


def ensure_built(names: Iterable[str] = ("stratabench-go",), *, rebuild: bool = False) -> None:
    """Build each program whose binary is missing or was built from other sources or another Go.

    The binary's content key is kept beside it (``NAME.key``); ``rebuild``
    builds anyway. Without Go, an existing binary is used as it is.
    """
    stale = []
    for name in names:
        binary = binary_path(name)
        stamp = _key_file(binary)
        if not binary.exists() or rebuild:
            stale.append(name)
        elif go_available()[0] and (not stamp.exists() or stamp.read_text().strip() != _source_key()):
            stale.append(name)
    if stale:
        build(stale)


def go_available() -> tuple[bool, str]:
    """Tell whether the Go toolchain can build the binaries, and why not.

    Returns
    -------
    (ok, reason)
        ``ok`` is true when a ``go`` command of version 1.24 or later is on
        ``PATH``; ``reason`` describes what was found or what is missing.
    """
    go = shutil.which("go")
    if go is None:
        return False, f"Go toolchain not found: {_INSTALL_HINT}"
    version = _go_version(go)
    if version is None:
        return False, f"`{go} env GOVERSION` failed: {_INSTALL_HINT}"
    shown = "go" + ".".join(map(str, version))
    if version < _MIN_GO:
        return False, f"{shown} at {go} is too old: {_INSTALL_HINT}"
    return True, f"{shown} at {go}"


def _tail(text: str, lines: int = _STDERR_TAIL) -> str:
    kept = [line for line in text.strip().splitlines() if line.strip()][-lines:]
    return " | ".join(kept) if kept else "(no output on stderr)"


def build(names: Iterable[str] = ("stratabench-go",), *, quiet: bool = True) -> None:
    """Build the Go programs ``names`` into :func:`binary_path`.

    Runs ``go build -o <binary_path(name)> ./cmd/<name>`` in ``go/`` for
    each name; ``build(PROGRAMS)`` builds them all. Each program compiles
    only the packages it imports: ``stratabench-go`` does not pay for the
    FerretDB modules ``stratabench-mongo`` needs. Go's build cache makes a
    rebuild of unchanged code take a second or two; a first build
    downloads modules through the Go module proxy. With ``quiet=False``
    the toolchain's output goes to this process's stdout and stderr. Each
    binary gets the content key of what it was built from beside it
    (``NAME.key``), which :func:`ensure_built` compares.

    Raises
    ------
    GoUnavailableError
        When no suitable ``go`` is on PATH, or ``go/cmd/<name>`` does not exist.
    GoRunError
        When ``go build`` fails.
    """
    ok, reason = go_available()
    if not ok:
        raise GoUnavailableError(reason)
    key = _source_key()
    for name in names:
        if not (GO_DIR / "cmd" / name).is_dir():
            raise GoUnavailableError(f"no Go program {name!r}: {GO_DIR / 'cmd' / name} does not exist")
        out = binary_path(name)
        out.parent.mkdir(parents=True, exist_ok=True)
        cmd = ["go", "build", "-o", str(out), f"./cmd/{name}"]
        # The build dies with its caller: a killed run must not leave `go` compiling.
        proc = subprocess.run(
            cmd, cwd=GO_DIR, capture_output=quiet, text=True, check=False,
            preexec_fn=parent_death_signal(),  # noqa: PLW1509
        )
        if proc.returncode != 0:
            detail = _tail(proc.stderr) if quiet else "see the output above"
            raise GoRunError(f"`{' '.join(cmd)}` in {GO_DIR} failed ({proc.returncode}): {detail}")
        _key_file(out).write_text(key + "\n")  # what it was built from, for ensure_built


def _binary(name: str = "stratabench-go") -> Path:
    path = binary_path(name)
    if not path.is_file():
        raise GoUnavailableError(
            f"{path} is not built: run stratabench.adapters.golang.build() (needs Go 1.24+)"
        )
    return path


def _run(args: list[str], *, timeout: float | None = None) -> str:
    cmd = [str(_binary()), *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise GoRunError(f"`{' '.join(cmd)}` timed out after {timeout} s") from exc
    if proc.returncode != 0:
        raise GoRunError(f"`{' '.join(cmd)}` failed ({proc.returncode}): {_tail(proc.stderr)}")
    return proc.stdout


def info() -> dict[str, Any]:
    """Describe the built ``stratabench-go``.

    Returns a dict with ``go_version``, ``gomaxprocs``, ``goos``,
    ``goarch``, ``formats`` (the bulkload formats, in the seed's order) and
    ``modules`` (module path to version of the codec libraries).
    """
    data = json.loads(_run(["info"], timeout=60))
    if not isinstance(data, dict):
        raise GoRunError(f"stratabench-go info printed {data!r}, not a JSON object")
    return data


def export(fmt: str, seed: int, size: int, out: str | os.PathLike[str]) -> Path:
    """Write the bulkload asset of ``fmt`` (any file format of ``info()["formats"]``) to ``out``.

    The json asset is the canonical form, so its SHA-1 is the dataset hash.
    Returns ``out`` as a Path.
    """
    path = Path(out)
    _run(["export", "--format", fmt, "--seed", str(seed), "--size", str(size), "--out", str(path)])
    return path


def decode_hash(fmt: str, path: str | os.PathLike[str]) -> str:
    """Decode the file at ``path`` with Go's ``fmt`` format and return the canonical hash of its records.

    The Python-to-Go half of the cross-language check: a file a Python
    codec wrote, read by Go, must hash to the dataset's hash.
    """
    return _run(["decode", "--format", fmt, "--in", str(path)]).strip()


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _join(values: str | Iterable[str]) -> str:
    return values if isinstance(values, str) else ",".join(values)


def _bad_output_line(line: BadLine) -> GoRunError:
    if line.error is not None:
        return GoRunError(f"stratabench-go printed a line that is not JSON: {line.text.strip()[:200]!r}")
    return GoRunError(f"stratabench-go printed {line.text.strip()[:200]!r}, not a JSON object")


def _drain(stream: IO[str], keep: collections.deque[str]) -> None:
    for line in stream:
        keep.append(line.rstrip("\n"))


#: The Go runtime settings ``stratabench-go bulkload`` runs with: the heap it
#: frees stays mapped (MADV_FREE), so a sample does not fault back pages the
#: last one returned (the bulkload suite's go.py has the measurements).
BULKLOAD_GODEBUG = "madvdontneed=0"


def bulkload_env(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with :data:`BULKLOAD_GODEBUG` before its own ``GODEBUG``.

    The runtime reads GODEBUG left to right, the later setting winning, so
    a ``GODEBUG=madvdontneed=1`` of the caller's still holds.
    """
    godebug = ",".join(part for part in (BULKLOAD_GODEBUG, environ.get("GODEBUG", "")) if part)
    return {**environ, "GODEBUG": godebug}


def run_bulkload(
    *,
    seed: int,
    size: int,
    workdir: str | os.PathLike[str],
    formats: str | Iterable[str],
    variants: str | Iterable[str],
    benchtime: str = "1s",
    count: int = 3,
    timeout: float | None = None,
    embed_max_rss: str | None = None,
    embed_timeout: str | None = None,
    embed_cache: str | os.PathLike[str] | None = None,
    cells: Iterable[str] | None = None,
    loops: Mapping[str, int] | None = None,
    checked: Iterable[str] | None = None,
) -> Iterator[dict[str, Any]]:
    """Run ``stratabench-go bulkload`` and yield each cell as it finishes.

    Each yielded dict is one JSON line of the program: ``format``,
    ``variant``, ``loops``, ``samples`` (``wall_ns``, ``alloc_total_bytes``,
    ``allocs_total``: one value per repetition), ``size_bytes``, ``hash``,
    ``extra`` and ``error`` (``None``, or a one-line reason for a failed
    cell, whose samples are then empty). Cells arrive one at a time, so a
    caller can show progress.

    Parameters
    ----------
    formats, variants
        Names, as a list or one comma-separated string.
    benchtime
        Target time per benchmark, in Go's -benchtime syntax (``1s``,
        ``100ms``, or an iteration count such as ``10x``).
    count
        Samples per cell: the benchmark is repeated this many times.
    timeout
        Seconds for the whole run; the program is killed past it.
    embed_max_rss, embed_timeout
        Limits of the embed cell's compilation (``8GiB``, ``10m``);
        ``None`` keeps the program's defaults.
    embed_cache
        The directory of the embed program's cached build
        (:func:`embed_cache_dir`): reused with its recorded build costs when
        complete, else filled by this run's build. ``None`` builds every time.
    cells
        ``format/variant`` names: only these cells, in place of every
        variant of every format.
    loops
        A cell's (``format/variant``) iterations per sample: it measures
        that many, without testing.Benchmark's ramp-up to ``benchtime``.
    checked
        ``format/variant`` cells an earlier process of the run checked: their
        last sample skips the check (a decode of what an encode wrote, the
        records' hash), and their line has no ``hash``.

    Raises
    ------
    GoRunError
        When the program exits non-zero (a bad option or an unknown format
        exits with 2), prints something that is not a JSON object, or
        runs out of time. The message ends with its stderr tail.
    """
    args = [
        "bulkload",
        "--seed", str(seed),
        "--size", str(size),
        "--workdir", str(workdir),
        "--formats", _join(formats),
        "--variants", _join(variants),
        "--benchtime", benchtime,
        "--count", str(count),
        "--exit-with-stdin",
    ]  # fmt: skip
    if embed_max_rss is not None:
        args += ["--embed-max-rss", embed_max_rss]
    if embed_timeout is not None:
        args += ["--embed-timeout", embed_timeout]
    if embed_cache is not None:
        args += ["--embed-cache", str(embed_cache)]
    if cells is not None:
        args += ["--cells", _join(cells)]
    if loops:
        args += ["--loops", ",".join(f"{cell}={n}" for cell, n in loops.items())]
    if checked:
        args += ["--checked", _join(checked)]
    cmd = [str(_binary()), *args]
    stderr_tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL)
    # A session of its own, so that killing its process group also ends the
    # compilers an embed cell started. That session is out of reach of a
    # signal to ours, so its stdin is a pipe we hold: when this process ends,
    # however it ends, the pipe closes and --exit-with-stdin stops it.
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, env=bulkload_env(os.environ),
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    # stderr is drained on the side so that a chatty program cannot block
    # on a full pipe while we wait for its next stdout line.
    drainer = threading.Thread(target=_drain, args=(proc.stderr, stderr_tail), daemon=True)
    drainer.start()
    timed_out = threading.Event()
    watchdog: threading.Timer | None = None
    if timeout is not None:

        def _expire() -> None:
            timed_out.set()
            _kill_group(proc)

        watchdog = threading.Timer(timeout, _expire)
        watchdog.daemon = True
        watchdog.start()
    try:
        for _, record in json_objects(proc.stdout, _bad_output_line):
            yield record
        returncode = proc.wait()
        drainer.join()
        if timed_out.is_set():
            raise GoRunError(f"stratabench-go bulkload timed out after {timeout} s: {_tail(chr(10).join(stderr_tail))}")
        if returncode != 0:
            raise GoRunError(
                f"stratabench-go bulkload failed ({returncode}): {_tail(chr(10).join(stderr_tail))}"
            )
    finally:
        if watchdog is not None:
            watchdog.cancel()
        if proc.poll() is None:
            # The caller stopped iterating early (or an error above): the
            # program must not outlive the iterator.
            _kill_group(proc)
            proc.wait()
        drainer.join(timeout=5)
        proc.stdin.close()
        proc.stdout.close()
        proc.stderr.close()
