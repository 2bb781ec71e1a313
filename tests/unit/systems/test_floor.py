"""A system under test loads only itself and the base modules: not the harness that measures it.

The counts come from fresh interpreters, so nothing this test session
imported is counted.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from stratabench.suites.parking.process import server_command
from stratabench.systems.parking.driver import SuiteDriver
from stratabench.systems.parking.schema import create_parking_engine, recreate
from tests.availability import unavailable

#: The modules below every floor, which any system may use (pyproject.toml, "systems import only the base modules").
BASE = {"stratabench", "stratabench.systems", "stratabench.errors", "stratabench.redact", "stratabench.registry",
        "stratabench.scratch", "stratabench.units"}  # fmt: skip

_LOADED = "sorted(m for m in sys.modules if m == 'stratabench' or m.startswith('stratabench.'))"


def _loaded_after(statement: str) -> list[str]:
    code = f"import json, sys\n{statement}\nprint(json.dumps({_LOADED}))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    loaded: list[str] = json.loads(done.stdout)
    return loaded


def _harness(loaded: list[str], system: str) -> list[str]:
    return [m for m in loaded if m not in BASE and not m.startswith(f"stratabench.systems.{system}")]


def test_the_parking_protocol_loads_no_module_of_the_harness() -> None:
    loaded = _loaded_after("import stratabench.systems.parking.protocol")
    assert _harness(loaded, "parking") == []
    assert not any(m.startswith(("stratabench.engine", "stratabench.report", "stratabench.suites", "stratabench.cli"))
                   for m in loaded)  # fmt: skip
    assert len(loaded) <= 6, loaded  # was 45 when the service lived in suites/parking


def test_the_package_root_loads_the_engine_only_when_asked() -> None:
    assert _loaded_after("import stratabench.errors") == ["stratabench", "stratabench.errors"]  # was 19 modules
    loaded = _loaded_after("from stratabench import measure\nassert measure.__module__ == 'stratabench.api'")
    assert "stratabench.api" in loaded


@pytest.mark.parametrize("system", ["lazy", "parking", "treestore"])
def test_every_module_of_a_system_loads_none_of_the_harness(system: str) -> None:
    root = Path(__file__).parents[3] / "src" / "stratabench" / "systems" / system
    modules = sorted(".".join(("stratabench", "systems", system, *p.relative_to(root).with_suffix("").parts))
                     .removesuffix(".__init__") for p in root.rglob("*.py"))  # fmt: skip
    loaded = _loaded_after("\n".join(f"import {m}" for m in modules))
    assert _harness(loaded, system) == []


@pytest.mark.parametrize("impl", ["python-core", "python-orm"])
def test_a_python_parking_server_started_as_the_suite_starts_it_carries_none_of_the_harness(
        impl: str, tmp_path: Path) -> None:  # fmt: skip
    if importlib.util.find_spec("sqlalchemy") is None:
        unavailable("no sqlalchemy (install stratabench[parking])")
    url = f"sqlite:///{tmp_path / 'p.db'}"
    engine = create_parking_engine(url)
    recreate(engine)
    engine.dispose()
    command = server_command(impl, url)
    module = command[command.index("-m") + 1]
    # The suite's own command line, with `-m MODULE` run through runpy so the server reports its modules on exit.
    report = f"import atexit, json, runpy, sys; atexit.register(lambda: print('modules', json.dumps({_LOADED})))"
    command[command.index("-m"):command.index("-m") + 2] = [
        "-c", f"{report}; runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as server:
        assert server.stdin is not None and server.stdout is not None
        try:
            listening = server.stdout.readline().split()
            assert listening[0] == "listening", listening
            result = SuiteDriver(f"http://{listening[1]}/", seed=7).run()  # every call, so lazy imports happen too
            assert result.ok, result.failure
        finally:
            server.stdin.close()
            rest = server.stdout.read()
            server.wait(timeout=60)
    loaded = json.loads(rest.split("modules ", 1)[1])
    assert f"stratabench.systems.parking.servers.{impl.replace('-', '_')}" in loaded
    assert _harness(loaded, "parking") == []
