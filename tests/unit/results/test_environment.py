"""The results header's package versions, derived from what the registered plugins require."""

from __future__ import annotations

from importlib import metadata

from stratabench.cli.run import plugin_modules
from stratabench.results.environment import environment, package_versions

#: What results/environment.py listed by hand before the list was derived: nothing may be lost.
FORMERLY_LISTED = {
    "stratabench", "orjson", "msgpack", "msgspec", "cbor2", "protobuf", "zstandard", "lz4", "lmdb", "redis",
    "pymemcache", "psycopg", "pymysql", "pymongo", "google-cloud-ndb", "google-cloud-datastore", "psutil",
}


def test_each_module_is_recorded_as_the_distribution_that_provides_it() -> None:
    versions = package_versions(["google.cloud.ndb", "google.protobuf", "redis", "no_such_module_anywhere"])
    assert {"google-cloud-ndb", "protobuf", "redis"} <= set(versions)
    # google is a namespace package: only the distributions holding the named modules are recorded.
    assert "google-cloud-datastore" not in versions and "google-auth" not in versions
    assert versions["redis"] == metadata.version("redis")


def test_stratabench_and_what_it_always_installs_are_recorded_without_plugins() -> None:
    versions = package_versions()
    assert {"stratabench", "psutil", "rich", "scipy", "matplotlib"} <= set(versions)
    assert "redis" not in versions  # an extra's package comes with a plugin that needs it


def test_the_registered_plugins_cover_every_formerly_listed_package() -> None:
    installed = {name for name in FORMERLY_LISTED if _installed(name)}
    assert installed <= set(environment(plugin_modules())["packages"])


def _installed(name: str) -> bool:
    try:
        metadata.version(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def test_the_environment_records_the_load_at_the_start_and_the_governor_where_readable() -> None:
    import os
    from pathlib import Path

    from stratabench.results.environment import cpu_governor, environment

    recorded = environment()
    load = recorded["load_average_start"]
    assert isinstance(load, list) and len(load) == 3 and all(value >= 0 for value in load)
    assert abs(load[2] - os.getloadavg()[2]) < 1.0  # the 15-minute average barely moves in a second
    readable = sorted(Path("/sys/devices/system/cpu").glob("cpu[0-9]*/cpufreq/scaling_governor"))
    expected = readable[0].read_text().strip() if readable else None
    assert recorded["cpu_governor"] == cpu_governor()
    assert (cpu_governor() or "").split(",")[0] == (expected or "")
