"""Real local servers for the tests, started by stratabench's own services code.

``local_servers`` starts every service once per test session (in parallel,
on free loopback ports, in temporary directories) and stops them at the
end; ``server_url(name)`` gives a test the URL of one. A server that cannot
start is skipped with its reason, except under ``CI=true``, where it fails
the test: CI installs every server, so a missing one is a bug there.
``go_program(name)`` builds one of the project's Go programs the same way.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from stratabench.services.session import LocalServices, local_services
from stratabench.services.state import STATE_ENV
from tests.availability import unavailable

# Under CI=true every property-based test draws the same inputs each run (a
# seed derived from the test), so a CI run fails only on a change, never on a
# new random draw; run locally, each run draws fresh inputs and keeps what
# fails in .hypothesis/ to replay it.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI", "").lower() == "true":
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def services_state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A state file of the test session's own, so no test sees the user's servers."""
    path = str(tmp_path_factory.mktemp("services-state") / "services.json")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(STATE_ENV, path)
        yield path


@pytest.fixture(scope="session")
def local_servers(services_state: str) -> Iterator[LocalServices]:
    """Every service that can start here, for the whole session."""
    with local_services() as running:
        yield running


@pytest.fixture
def server_url(local_servers: LocalServices) -> Callable[[str], str]:
    """``server_url("redis")``: the URL of the session's server, or skip/fail with why not."""

    def url(name: str) -> str:
        if name in local_servers:
            return local_servers[name].url
        failure = local_servers.failures.get(name)
        unavailable(f"no {name} server: {failure.message if failure else 'not started'}")
        raise AssertionError("unreachable")

    return url


@pytest.fixture(scope="session")
def go_program() -> Callable[[str], Path]:
    """Build a Go program of ``go/cmd`` (once per name), or skip without Go (fail under CI)."""
    from stratabench.adapters import golang

    built: dict[str, Path] = {}

    def build(name: str = "stratabench-go") -> Path:
        if name not in built:
            ok, reason = golang.go_available()
            if not ok:
                unavailable(reason)
            golang.build((name,))
            built[name] = golang.binary_path(name)
        return built[name]

    return build
