"""Plugin settings: declarations, the reader that refuses undeclared names, and the --set check."""

from __future__ import annotations

import subprocess
import sys
from typing import ClassVar

import pytest

from stratabench.errors import StratabenchError, UnknownNameError, UsageError
from stratabench.options import RunOptions
from stratabench.plugins import check_settings, declared_settings
from stratabench.settings import Setting, SettingReader, index_settings


class Widget:
    settings: ClassVar[tuple[Setting, ...]] = (
        Setting("widget.label", "", "a label"),
        Setting("widget.mode", "fast", "how", choices=("fast", "slow")),
        Setting("widget.count", "3", "how many", "whole", minimum=0, maximum=100),
        Setting("widget.auto", "", "how many; default: the widget decides", "whole", minimum=-10, maximum=100),
        Setting("widget.timeout", "1.5", "seconds", "number", minimum=0, maximum=100),
        Setting("widget.verbose", "no", "talk more", "flag"),
        Setting("widget.parts", "", "parts", "list"),
        Setting("gadget.size", "7", "declared in another namespace", "whole", minimum=0, maximum=100),
    )


def reader(**values: str) -> SettingReader:
    return SettingReader(Widget, RunOptions(settings=values))


def test_defaults_are_the_declared_ones() -> None:
    for config in (reader(), SettingReader(Widget, None)):
        assert config.text("widget.label") == "" and config.text("widget.mode") == "fast"
        assert config.whole("widget.count") == 3 and config.number("widget.timeout") == 1.5
        assert config.flag("widget.verbose") is False and config.items("widget.parts") == []
        assert config.whole("gadget.size") == 7
        assert not config.given("widget.auto") and config.given("widget.count")


def test_values_are_converted_for_their_kind() -> None:
    config = reader(**{"widget.mode": "SLOW", "widget.count": "12", "widget.timeout": "0.25", "widget.verbose": "Yes",
                       "widget.parts": " a, b,,c ", "widget.auto": "-2"})
    assert config.text("widget.mode") == "slow" and config.whole("widget.count") == 12
    assert config.number("widget.timeout") == 0.25 and config.flag("widget.verbose") is True
    assert config.items("widget.parts") == ["a", "b", "c"]
    assert config.given("widget.auto") and config.whole("widget.auto") == -2
    for word, meaning in (("true", True), ("on", True), ("1", True), ("false", False), ("off", False), ("0", False)):
        assert reader(**{"widget.verbose": word}).flag("widget.verbose") is meaning


@pytest.mark.parametrize(
    ("name", "value", "read", "message"),
    [
        ("widget.count", "abc", SettingReader.whole, "setting widget.count='abc' is not a whole number from 0 to 100"),
        ("widget.count", "1.5", SettingReader.whole, "setting widget.count='1.5' is not a whole number from 0 to 100"),
        ("widget.timeout", "soon", SettingReader.number, "setting widget.timeout='soon' is not a number from 0 to 100"),
        ("widget.verbose", "maybe", SettingReader.flag, "setting widget.verbose='maybe' is not yes or no"),
        ("widget.mode", "medium", SettingReader.text,
         "setting widget.mode='medium' is not valid; use one of fast, slow"),
    ],
)
def test_a_bad_value_is_a_one_line_usage_error(name: str, value: str, read: object, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        read(reader(**{name: value}), name)  # type: ignore[operator]
    assert caught.value.message == message


def test_reading_an_undeclared_name_or_as_another_kind_is_a_bug() -> None:
    with pytest.raises(LookupError, match="Widget reads setting 'widget.colour' but does not declare it"):
        reader(**{"widget.colour": "red"}).text("widget.colour")
    with pytest.raises(LookupError, match="setting widget.count is declared whole, read as number"):
        reader().number("widget.count")
    with pytest.raises(LookupError):
        SettingReader(object, None).given("widget.count")


def test_bad_declarations_fail_when_made() -> None:
    with pytest.raises(ValueError, match="is not PLUGIN.SETTING"):
        Setting("nodot", "", "no namespace")
    with pytest.raises(UsageError, match="not a whole number"):
        Setting("widget.count", "many", "a default that is not of its kind", "whole", minimum=0, maximum=100)
    assert Setting("widget.mode", "fast", "", choices=("fast",)).form == "one of fast"
    assert Setting("widget.count", "1", "", "whole", minimum=0, maximum=100).form == "whole number from 0 to 100"


def test_empty_values() -> None:
    check = Setting.check
    check(Setting("w.text", "x", ""), "")  # text and lists may be empty
    check(Setting("w.list", "a", "", "list"), "")
    check(Setting("w.auto", "", "", "whole", minimum=0, maximum=100), "")  # an empty default: empty means "the plugin decides"
    with pytest.raises(UsageError, match="not a whole number"):
        check(Setting("w.count", "3", "", "whole", minimum=0, maximum=100), "")
    with pytest.raises(UsageError, match="not valid"):
        check(Setting("w.mode", "fast", "", choices=("fast",)), "")


def test_two_plugins_cannot_declare_one_name() -> None:
    other = type("Other", (), {"settings": (Setting("widget.count", "1", "again", "whole", minimum=0, maximum=100),)})
    with pytest.raises(StratabenchError, match="setting widget.count is declared by suite widget and store other"):
        index_settings([("suite", "widget", Widget), ("store", "other", other)])
    with pytest.raises(StratabenchError, match="store odd: `settings` must be a tuple of Setting"):
        index_settings([("store", "odd", type("Odd", (), {"settings": ["widget.count"]}))])


KNOWN = index_settings([("suite", "widget", Widget), ("store", "plain", type("Plain", (), {}))])


def test_check_accepts_declared_names_and_good_values() -> None:
    check_settings({}, KNOWN)
    check_settings({"widget.count": "4", "gadget.size": "9", "widget.auto": "", "widget.parts": "x,y"}, KNOWN)
    assert KNOWN["gadget.size"].plugin == "widget" and KNOWN["gadget.size"].kind == "suite"


def test_check_names_the_known_settings_of_the_namespace() -> None:
    with pytest.raises(UnknownNameError) as caught:
        check_settings({"widget.cuont": "4"}, KNOWN)
    assert caught.value.message == (
        "--set widget.cuont: unknown setting; known for widget: widget.label, widget.mode, widget.count, "
        "widget.auto, widget.timeout, widget.verbose, widget.parts"
    )


def test_check_lists_the_namespaces_when_the_namespace_is_unknown() -> None:
    with pytest.raises(UnknownNameError) as caught:
        check_settings({"plain.size": "4"}, KNOWN)
    assert caught.value.message.startswith("--set plain.size: unknown setting namespace 'plain'; known: gadget, widget")
    assert caught.value.exit_code == 2


def test_check_refuses_a_bad_value() -> None:
    with pytest.raises(UsageError, match=r"^setting widget.count='abc' is not a whole number from 0 to 100$"):
        check_settings({"widget.count": "abc"}, KNOWN)


def test_the_registered_plugins_declare_their_settings() -> None:
    known = declared_settings()
    owners = {name: (entry.kind, entry.plugin) for name, entry in known.items()}
    assert owners["go.benchtime"] == ("suite", "bulkload")  # a namespace that is not the plugin's name
    assert owners["postgresql.connect_timeout"] == ("store", "postgresql")
    assert owners["sqlite.journal_mode"] == ("store", "sqlite") and owners["zlib.level"] == ("compressor", "zlib")
    assert {"cache.min_time", "entities.min_time", "timeit.stmt", "matrix.operations", "lmdb.map_size"} <= set(known)
    assert known["zlib.level"].setting.default == "6" and known["sqlite.busy_timeout"].setting.default == "5"
    check_settings({name: entry.setting.default for name, entry in known.items()})


def test_listing_settings_imports_no_optional_package() -> None:
    optional = ("redis", "pymemcache", "psycopg", "pymysql", "pymongo", "lmdb", "zstandard", "lz4",
                "google.cloud.ndb", "google.cloud.datastore", "msgspec", "orjson", "cbor2", "msgpack")
    code = (
        "import sys\n"
        "from stratabench.plugins import check_settings, declared_settings\n"
        "declared_settings(); check_settings({'go.count': '2'})\n"
        f"print(sorted(m for m in {optional!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"


def test_numbers_must_be_declared_with_a_range() -> None:
    with pytest.raises(ValueError, match="declare its minimum and maximum"):
        Setting("widget.count", "1", "", "whole")


@pytest.mark.parametrize(("setting", "value", "message"), [
    ("memory.max_items", "-5", "setting memory.max_items='-5' is out of range: use a whole number from 0 to"),
    ("lmdb.map_size", "-1", "setting lmdb.map_size='-1' is out of range: use a whole number from 1,048,576 to"),
    ("sqlite.busy_timeout", "nan", "setting sqlite.busy_timeout='nan' is not a number from 0 to 3,600 (a finite"),
    ("sqlite.busy_timeout", "inf", "(a finite number)"),
    ("redis.retries", "-1", "setting redis.retries='-1' is out of range: use a whole number from 0 to 100"),
    ("redis.connect_timeout", "0", "is out of range: use a number from 0.001 to 3,600"),
    ("zstd.level", "99", "is out of range: use a whole number from 1 to 22"),
])
def test_registered_settings_refuse_values_out_of_range(setting: str, value: str, message: str) -> None:
    from stratabench.plugins import check_settings

    with pytest.raises(UsageError) as caught:
        check_settings({setting: value})
    assert message in caught.value.message


def test_every_registered_number_has_a_range() -> None:
    from stratabench.plugins import declared_settings

    numeric = [d.setting for d in declared_settings().values() if d.setting.kind in ("whole", "number")]
    assert numeric and all(s.minimum is not None and s.maximum is not None for s in numeric)


def test_no_registered_help_text_shows_an_unfilled_placeholder() -> None:
    # A help string built from pieces where one piece lacks its f prefix shows "{DEFAULT_TRIES}" to the user.
    from stratabench.plugins import declared_settings

    unfilled = {name: d.setting.help for name, d in declared_settings().items() if "{" in d.setting.help}
    assert not unfilled
