"""Property-based fuzzing of the command line (issue 14): no input gives a traceback.

Hypothesis generates flags, settings, store URLs, ``--data`` files and
results files, and runs each as ``stratabench`` in a process of its own
(forked from a warmed interpreter, :mod:`fork_server`: its own descriptors,
exit status, crash or hang), plus a sample through ``python -m stratabench``
itself.
Each must end with a documented exit status
(:func:`stratabench.errors.exit_statuses`), an error as one ``error:``
line, and no traceback. The paths are the cheap ones (``run --dry-run``,
``report``, ``compare``, ``load`` and ``clean`` against a closed port).

Issue 27 added results files whose header, trailer, options or environment
has a value of every wrong type; special files (FIFOs, character devices,
directories, files over the read limit) given to every command that reads
one, each under an alarm so a hang fails instead of blocking; and store
URLs whose password holds every reserved character, which must appear in
no output and no file written. Every sub-command (``services up`` and the
others too) gets argument lists of its own options with any values, ended
by an option no parser knows, so that every value is converted and nothing
runs. 1,900 inputs per run in all, each in a process of its own, 28 of
them started as ``python -m stratabench``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import quote
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from stratabench.errors import exit_statuses
from stratabench.plugins import declared_settings
from stratabench.results.format import cell_to_json, header_record
from stratabench.results.records import CellResult, MetricResult

DOCUMENTED = set(exit_statuses())
FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Parsed --data files go to a cache of this module's own, never the user's."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STRATABENCH_CACHE_DIR", str(tmp_path_factory.mktemp("fuzz-cache")))
        yield


class ForkServer:
    """``tests/fuzz/fork_server.py``: each input runs as ``stratabench`` in a process of its own (see there why)."""

    #: A child still running after this many seconds is killed and the input fails as a hang; below the
    #: 60-s alarms of the special-file tests, so the server has answered before they would fire.
    TIMEOUT_S = 45.0

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.requests = 0
        self.process = subprocess.Popen([sys.executable, str(Path(__file__).with_name("fork_server.py"))],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None and self.process.stdout.readline() == "ready\n"

    def run(self, argv: list[str]) -> tuple[int, str, str]:
        """Exit status, stdout and stderr of ``stratabench ARGV`` run in a forked child."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.requests += 1
        out, err = self.directory / f"{self.requests}.out", self.directory / f"{self.requests}.err"
        request = {"id": self.requests, "argv": argv, "out": str(out), "err": str(err), "cwd": str(self.directory),
                   "timeout": self.TIMEOUT_S}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        while True:  # an answer to an earlier request cut short by an alarm is skipped
            answer = json.loads(self.process.stdout.readline())
            if answer["id"] == self.requests:
                break
        shown = out.read_text(errors="replace"), err.read_text(errors="replace")
        out.unlink()
        err.unlink()
        assert not answer["hung"], (argv, f"no answer after {self.TIMEOUT_S:g} s: the command hangs", shown[1])
        assert answer["signal"] is None, (argv, f"killed by signal {answer['signal']}", shown[1])
        return answer["status"], *shown

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()  # the server ends at the end of its input
        self.process.wait(timeout=60)
        self.process.stdout.close()


SERVER: list[ForkServer] = []


@pytest.fixture(autouse=True, scope="module")
def fork_server(private_cache: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One server for the module, started after the private cache is set, so every child inherits it."""
    server = ForkServer(tmp_path_factory.mktemp("fuzz-processes"))
    SERVER.append(server)
    yield
    SERVER.remove(server)
    server.close()


def call(*argv: str) -> tuple[int, str]:
    """``stratabench ARGV`` in a process of its own; fails on a traceback, a crash, a hang or an undocumented status."""
    code, output, errors = SERVER[0].run(list(argv))
    assert "Traceback" not in errors and "Traceback" not in output, (argv, errors)
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


# -- issue 27: malformed headers, special files, passwords -------------------------------------------

WRONG_TYPES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=6),
                        st.lists(json_values, max_size=2), st.dictionaries(st.text(max_size=4), json_values, max_size=2))
HEADER_PLACES = ["header", "environment", "options", "options.engine", "trailer", "trailer.environment"]
HEADER_KEYS = ["environment", "options", "services", "run_id", "started", "format_version", "python", "packages",
               "cpu_count", "memory_bytes", "load_average_start", "load_average_end", "cpu_governor", "hostname",
               "git_revision", "engine", "size", "seed", "stores", "settings", "codecs", "data", "samples", "target",
               "min_samples", "count", "finished", "type"]


def _malformed(place: str, key: str, value: object) -> str:
    lines = _good_lines()
    header = json.loads(json.dumps(lines[0]))
    header["environment"] = {"cpu": "c", "python": {"version": "3"}, "packages": {}}
    trailer: dict[str, object] = {"type": "trailer", "finished": "2026-11-22T00:01:00+00:00", "environment": {}}
    target = {"header": header, "environment": header["environment"], "options": header["options"],
              "trailer": trailer, "trailer.environment": trailer["environment"]}.get(place)
    if place == "options.engine":
        target = header["options"].setdefault("engine", {})
    assert isinstance(target, dict)
    target[key] = value
    return "".join(json.dumps(line) + "\n" for line in [header, *lines[1:], trailer])


@settings(FUZZ, max_examples=250)
@given(place=st.sampled_from(HEADER_PLACES), key=st.sampled_from(HEADER_KEYS), value=WRONG_TYPES,
       command=st.sampled_from(["report", "report-html", "compare", "compare-gate"]))
def test_malformed_headers(tmp_path: Path, place: str, key: str, value: object, command: str) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(_malformed(place, key, value))
    good = tmp_path / "good.jsonl"
    good.write_text("".join(json.dumps(line) + "\n" for line in _good_lines()))
    argv = {"report": ["report", str(path)], "report-html": ["report", str(path), "--format", "html"],
            "compare": ["compare", str(path), str(good)],
            "compare-gate": ["compare", str(good), str(path), "--fail-above", "1.1"]}[command]
    call(*argv)


@contextlib.contextmanager
def alarm(seconds: int) -> Iterator[None]:
    """A hang becomes a failure: SIGALRM raises in the main thread after ``seconds``."""
    def hung(signum: int, frame: object) -> None:
        raise TimeoutError(f"no answer after {seconds} s: the command hangs")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


SPECIAL = ["fifo", "/dev/zero", "/dev/urandom", "/dev/null", "directory", "huge", "missing", "empty-name"]
READERS = ["report", "compare-first", "compare-second", "run --data", "load --data", "run-output-dir"]


def _special(tmp_path: Path, kind: str) -> str:
    if kind == "fifo":
        path = tmp_path / "fifo.jsonl"
        if not path.exists():
            os.mkfifo(path)
        return str(path)
    if kind == "directory":
        return str(tmp_path)
    if kind == "huge":
        path = tmp_path / "huge.jsonl"
        with path.open("wb") as file:
            file.truncate(10**12)  # sparse: over every limit, no disk
        return str(path)
    if kind == "missing":
        return str(tmp_path / "missing.jsonl")
    if kind == "empty-name":
        return ""
    return kind


@settings(FUZZ, max_examples=60)
@given(kind=st.sampled_from(SPECIAL), reader=st.sampled_from(READERS))
def test_special_files(tmp_path: Path, kind: str, reader: str) -> None:
    target = _special(tmp_path, kind)
    good = tmp_path / "good.jsonl"
    good.write_text("".join(json.dumps(line) + "\n" for line in _good_lines()))
    with alarm(60):
        if reader == "report":
            code, _ = call("report", target)
        elif reader == "compare-first":
            code, _ = call("compare", target, str(good))
        elif reader == "compare-second":
            code, _ = call("compare", str(good), target, "--fail-above", "1.1")
        elif reader == "run --data":
            code, _ = call("run", "matrix", "--dry-run", "--data", target)
        elif reader == "load --data":
            code, _ = call("load", "--store", "memory://", "--data", target, "-o", str(tmp_path / "load.jsonl"))
        else:  # a special file among the results files a run reads for its time estimate
            folder = tmp_path / "out"
            folder.mkdir(exist_ok=True)
            if kind == "fifo" and not (folder / "x.jsonl").exists():
                os.mkfifo(folder / "x.jsonl")
            code, _ = call("run", "timeit", "--in-process", "--samples", "1", "--min-time", "0.001", "--warmups", "0",
                           "--memory-samples", "0", "-q", "-o", f"{folder}/")
            assert code == 0
            return
    assert code != 0, (kind, reader)


RESERVED = ":/?#[]@!$&'()*+,;=% \"<>\\^`{|}~"
passwords = st.builds(lambda middle: f"Zq{middle}9Xk",
                      st.text(alphabet=st.sampled_from(RESERVED + "abcXYZ019"), min_size=1, max_size=12))
URL_FORMS = ["redis://:{pw}@127.0.0.1:1/0", "redis://u:{pw}@127.0.0.1:1/0", "rediss://:{pw}@127.0.0.1:1/0",
             "postgresql://u:{pw}@/db?host=/nonexistent", "postgresql://u:{pw}@:1/db", "mysql://u:{pw}@127.0.0.1:1/db",
             "mongodb://u:{pw}@127.0.0.1:1/db", "memcached://u:{pw}@127.0.0.1:1", "sqlite://u:{pw}@/x.db",
             "postgresql://127.0.0.1:1/db?password={pw}", "redis://:{pw}@[::1", "redis://:{pw}@127.0.0.1:x/0"]


def _no_password(password: str, *texts: str) -> None:
    for text in texts:
        for form in {password, quote(password, safe=""), quote(password)}:
            assert form not in text, (password, text[-400:])


@settings(FUZZ, max_examples=150)
@given(password=passwords, form=st.sampled_from(URL_FORMS), encode=st.booleans(),
       command=st.sampled_from(["run --dry-run", "clean", "load", "services-free"]))
def test_passwords_never_shown(tmp_path: Path, password: str, form: str, encode: bool, command: str) -> None:
    url = form.format(pw=quote(password, safe="") if encode else password)
    out = io.StringIO()
    with alarm(60), contextlib.redirect_stdout(out):
        if command == "run --dry-run":
            _, err = call("run", "matrix", "--dry-run", "--store", url)
        elif command == "clean":
            _, err = call("clean", "--store", url)
        elif command == "load":
            _, err = call("load", "--store", url, "-o", str(tmp_path / "load.jsonl"), "--duration", "0.1",
                          "--warmup", "0", "--set", "redis.connect_timeout=1", "--set", "redis.socket_timeout=1")
        else:
            _, err = call("run", "timeit", "--dry-run", "--store", url)
    _no_password(password, out.getvalue(), err)
    for written in tmp_path.glob("*.jsonl"):
        _no_password(password, written.read_text(errors="replace"))


@settings(FUZZ, max_examples=12)
@given(password=passwords, form=st.sampled_from(URL_FORMS[:9]))
def test_passwords_never_written_by_a_run(tmp_path: Path, password: str, form: str) -> None:
    # A run that fails to reach the store writes the cell's error into the results file and every report.
    url = form.format(pw=password)
    data = tmp_path / "records.jsonl"
    data.write_text('{"id": 1}\n{"id": 2}\n')
    results = tmp_path / "r.jsonl"
    with alarm(120):
        _, err = call("run", "matrix", "--data", str(data), "--codec", "json", "--compressor", "none", "--store", url,
                      "--set", "matrix.stores=memory", "--set", "matrix.operations=get_one", "--in-process",
                      "--samples", "1", "--min-time", "0.001", "--warmups", "0", "--memory-samples", "0", "-q",
                      "-o", str(results), "--overwrite")
    _no_password(password, err)
    if results.exists():
        _no_password(password, results.read_text())
        for name in ("terminal", "markdown", "csv", "json", "html"):
            _, shown = call("report", str(results), "--format", name, "-o", str(tmp_path / f"r.{name}"), "--overwrite")
            _no_password(password, shown, (tmp_path / f"r.{name}").read_text())


@settings(FUZZ, max_examples=8)
@given(argv=st.one_of(
    st.builds(lambda kind, command: [*command, kind], st.sampled_from(["/dev/zero", "/dev/urandom", "/dev/null"]),
              st.sampled_from([["report"], ["run", "matrix", "--dry-run", "--data"]])),
    st.builds(lambda password, form: ["run", "timeit", "--dry-run", "--store", form.format(pw=password)],
              passwords, st.sampled_from(URL_FORMS)),
))
def test_issue_27_inputs_through_the_real_cli(tmp_path: Path, argv: list[str]) -> None:
    environment = {**os.environ, "STRATABENCH_CACHE_DIR": os.environ["STRATABENCH_CACHE_DIR"]}
    done = subprocess.run([sys.executable, "-m", "stratabench.cli.main", *argv], capture_output=True, text=True,
                          env=environment, timeout=120, check=False, cwd=tmp_path)
    assert "Traceback" not in done.stderr, (argv, done.stderr)
    assert done.returncode in DOCUMENTED, (argv, done.returncode, done.stderr)
    if "--store" in argv:
        password = argv[-1].split("Zq", 1)[1].rsplit("9Xk", 1)[0]
        _no_password(f"Zq{password}9Xk", done.stdout, done.stderr)


# -- every sub-command: any argument list is parsed to a documented end -------------------------------------------

def _sub_commands() -> dict[str, list[str]]:
    """Each sub-command (``services up`` too) and the option strings its parser knows."""
    import argparse

    from stratabench.cli.main import build_parser

    found: dict[str, list[str]] = {}

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, [*path, name])
        if path:
            found[" ".join(path)] = sorted(option for action in parser._actions for option in action.option_strings)

    walk(build_parser(), [])
    return found


SUB_COMMANDS = _sub_commands()
#: No parser knows it, so parsing always fails at the end: nothing runs (no benchmark, no server), but every
#: value before it has gone through its option's type.
POISON = "--no-such-option-zq9"
tokens = st.one_of(numbers, st.text(max_size=12), urls, st.sampled_from(["-1e308", "5%", "95%%", "", " ", "-", "="]))


def sub_command_argv(command: str, options: list[tuple[int, str]]) -> list[str]:
    known = SUB_COMMANDS[command]
    argv = command.split()
    for index, value in options:
        option = known[index % len(known)] if known else value
        argv += [option] if option in ("-h", "--help", "--version") else [option, value]
    return [*argv, POISON]


@settings(FUZZ, max_examples=300)
@given(command=st.sampled_from(sorted(SUB_COMMANDS)),
       options=st.lists(st.tuples(st.integers(min_value=0, max_value=200), tokens), max_size=5))
def test_every_sub_command_ends_with_a_documented_status_on_any_arguments(command: str,
                                                                          options: list[tuple[int, str]]) -> None:
    argv = sub_command_argv(command, options)
    assume("--" not in argv)  # after it, the poison would be a positional argument (timeit's statement)
    code, _ = call(*argv)
    assert code in (0, 2), (argv, code)  # --help, or the usage error the poison guarantees


@settings(FUZZ, max_examples=12)
@given(command=st.sampled_from(sorted(SUB_COMMANDS)),
       options=st.lists(st.tuples(st.integers(min_value=0, max_value=200), tokens), max_size=4))
def test_every_sub_command_through_the_real_cli(tmp_path: Path, command: str, options: list[tuple[int, str]]) -> None:
    argv = sub_command_argv(command, options)
    assume("--" not in argv and all("\x00" not in argument for argument in argv))
    environment = {**os.environ, "STRATABENCH_CACHE_DIR": os.environ["STRATABENCH_CACHE_DIR"]}
    done = subprocess.run([sys.executable, "-m", "stratabench.cli.main", *argv], capture_output=True, text=True,
                          env=environment, timeout=120, check=False, cwd=tmp_path)
    assert "Traceback" not in done.stderr, (argv, done.stderr)
    assert done.returncode in (0, 2), (argv, done.returncode, done.stderr)
