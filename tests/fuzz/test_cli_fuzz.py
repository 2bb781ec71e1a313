"""Property-based fuzzing of the command line (issue 14): no input gives a traceback.

Hypothesis generates flags, settings, store URLs, ``--data`` files and
results files, 1,108 inputs per run, and feeds them to ``main(argv)``
in this process with the output captured, plus a few through the real
``stratabench`` process. Each must end with a documented exit status
(:func:`stratabench.errors.exit_statuses`), an error as one ``error:``
line, and no traceback. The paths are the cheap ones (``run --dry-run``,
``report``, ``compare``), so the whole file takes about a minute.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from stratabench.cli.main import main
from stratabench.errors import exit_statuses
from stratabench.plugins import declared_settings
from stratabench.results.format import cell_to_json, header_record
from stratabench.results.records import CellResult, MetricResult

DOCUMENTED = set(exit_statuses())
FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
                derandomize=False)


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Parsed --data files go to a cache of this module's own, never the user's."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STRATABENCH_CACHE_DIR", str(tmp_path_factory.mktemp("fuzz-cache")))
        yield


def call(*argv: str) -> tuple[int, str]:
    """``main(argv)``, with stdout and stderr captured; fails on a traceback or an undocumented status."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exit_:  # only --help exits this way
            code = exit_.code if isinstance(exit_.code, int) else 0
    errors = err.getvalue()
    assert "Traceback" not in errors and "Traceback" not in out.getvalue(), (argv, errors)
    assert code in DOCUMENTED, (argv, code, errors)
    error_lines = [line for line in errors.splitlines() if line.startswith("error:")]
    assert len(error_lines) <= 1, (argv, errors)
    if code not in (0, 1):
        assert error_lines, (argv, code, errors)
    return code, errors


numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.sampled_from(["nan", "inf", "-inf", "1e300", "0", "-0", "", " ", "1_000", "0x10", "½", "1e-300"]),
    st.text(max_size=12),
)
FLAGS = ["--samples", "--warmups", "--min-time", "--memory-samples", "--cell-timeout", "--size", "--seed"]


@settings(FUZZ, max_examples=300)
@given(flag=st.sampled_from(FLAGS), value=numbers)
def test_flags(flag: str, value: str) -> None:
    call("run", "timeit", "--dry-run", f"{flag}={value}")


SETTING_NAMES = sorted(declared_settings())


@settings(FUZZ, max_examples=250)
@given(name=st.one_of(st.sampled_from(SETTING_NAMES), st.text(max_size=20)), value=st.one_of(numbers, st.text()))
def test_settings(name: str, value: str) -> None:
    call("run", "timeit", "--dry-run", "--set", f"{name}={value}")


SCHEMES = ["redis", "rediss", "sqlite", "memory", "file", "lmdb", "memcached", "postgresql", "mysql", "mongodb",
           "nosuch", ""]
urls = st.one_of(
    st.builds(lambda scheme, rest: f"{scheme}://{rest}", st.sampled_from(SCHEMES),
              st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)),
    st.builds(lambda scheme, user, host, port, path: f"{scheme}://{user}@{host}:{port}/{path}",
              st.sampled_from(SCHEMES), st.text(max_size=8), st.sampled_from(["127.0.0.1", "[::1", "[::1]", "host", ""]),
              st.text(max_size=6), st.text(max_size=10)),
    st.text(max_size=40),
)


@settings(FUZZ, max_examples=200)
@given(url=urls)
def test_store_urls(url: str) -> None:
    call("run", "timeit", "--dry-run", "--store", url)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=15,
)
data_files = st.one_of(
    st.lists(st.dictionaries(st.text(max_size=6), json_values, max_size=4), min_size=0, max_size=5).map(
        lambda records: "".join(json.dumps(record) + "\n" for record in records).encode()),
    st.lists(json_values, max_size=4).map(lambda values: "".join(json.dumps(v) + "\n" for v in values).encode()),
    st.binary(max_size=200),
    st.integers(min_value=1, max_value=3000).map(lambda depth: ('{"a": ' + "[" * depth + "]" * depth + "}\n").encode()),
)


@settings(FUZZ, max_examples=150)
@given(content=data_files, suffix=st.sampled_from([".jsonl", ".csv", ".txt"]))
def test_data_files(tmp_path: Path, content: bytes, suffix: str) -> None:
    path = tmp_path / f"records{suffix}"
    path.write_bytes(content)
    call("run", "matrix", "--dry-run", "--data", str(path), "--codec", "json", "--compressor", "none")


def _good_lines() -> list[dict[str, object]]:
    cell = CellResult("timeit", "x", {"stmt": "pass"}, "python", "ok", loops=1,
                      metrics={"wall_ns": MetricResult.of([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])})
    return [header_record("r", "2026-11-22T00:00:00+00:00", {}, {}), cell_to_json(cell), cell_to_json(cell)]


def _mutate(lines: list[dict[str, object]], index: int, key: str, value: object) -> list[dict[str, object]]:
    changed = [dict(line) for line in lines]
    changed[index][key] = value
    return changed


results_files = st.one_of(
    st.builds(_mutate, st.just(_good_lines()), st.integers(0, 2), st.sampled_from(
        ["type", "format_version", "suite", "cell", "params", "status", "metrics", "notes", "loops", "integrity",
         "duration_s", "error", "language"]), json_values).map(
        lambda lines: "".join(json.dumps(line) + "\n" for line in lines)),
    st.builds(lambda lines, cut: "".join(json.dumps(line) + "\n" for line in lines)[:cut], st.just(_good_lines()),
              st.integers(0, 2000)),
    st.text(max_size=300),
)


@settings(FUZZ, max_examples=200)
@given(content=results_files, command=st.sampled_from(["report", "compare"]))
def test_results_files(tmp_path: Path, content: str, command: str) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(content)
    if command == "report":
        call("report", str(path))
    else:
        good = tmp_path / "good.jsonl"
        good.write_text("".join(json.dumps(line) + "\n" for line in _good_lines()))
        call("compare", str(good), str(path), "--fail-above", "1.1")


@settings(FUZZ, max_examples=8)
@given(argv=st.one_of(
    # Commands that measure nothing: a random argument list must never start a real run.
    st.builds(lambda command, rest: [*command, *rest],
              st.sampled_from([["run", "--dry-run"], ["report"], ["compare"], ["list"]]),
              st.lists(st.text(max_size=10), max_size=4)),
    st.builds(lambda flag, value: ["run", "timeit", "--dry-run", f"{flag}={value}"], st.sampled_from(FLAGS), numbers),
    st.builds(lambda url: ["run", "timeit", "--dry-run", "--store", url], urls),
))
def test_through_the_real_cli(argv: list[str]) -> None:
    # A command line cannot carry a NUL (exec takes C strings); the in-process tests above do.
    assume(all("\x00" not in argument for argument in argv))
    environment = {**os.environ, "STRATABENCH_CACHE_DIR": os.environ["STRATABENCH_CACHE_DIR"]}
    done = subprocess.run([sys.executable, "-m", "stratabench.cli.main", *argv], capture_output=True, text=True,
                          env=environment, timeout=120, check=False)
    assert "Traceback" not in done.stderr, (argv, done.stderr)
    assert done.returncode in DOCUMENTED, (argv, done.returncode, done.stderr)
