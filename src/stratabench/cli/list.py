"""``stratabench list``: every plugin, whether it can run here, and why not; or every setting."""

from __future__ import annotations

import argparse
import json
from typing import Any

from stratabench.plugins import declared_settings, registries
from stratabench.registry import PluginInfo

__all__ = ["add_parser"]


def _settings() -> list[dict[str, Any]]:
    return [
        {"name": name, "default": entry.setting.default, "type": entry.setting.kind, "form": entry.setting.form,
         "help": entry.setting.help, "plugin": entry.plugin, "plugin_kind": entry.kind}
        for name, entry in declared_settings().items()
    ]


def _print_settings(settings: list[dict[str, Any]]) -> None:
    print("settings (--set NAME=VALUE; '-' marks an empty default: the plugin decides, as the text says)")
    name_width = max((len(s["name"]) for s in settings), default=0)
    default_width = max((len(s["default"] or "-") for s in settings), default=0)
    plugin = None
    for setting in settings:
        if (setting["plugin_kind"], setting["plugin"]) != plugin:
            plugin = (setting["plugin_kind"], setting["plugin"])
            print(f"  {setting['plugin']} {setting['plugin_kind']}")
        default = setting["default"] or "-"
        meaning = setting["help"] if setting["form"] == "text" else f"{setting['form']}: {setting['help']}"
        print(f"    {setting['name']:<{name_width}}  {default:<{default_width}}  {meaning}")


def _entry(kind: str, info: PluginInfo[Any]) -> dict[str, Any]:
    availability = info.availability
    if availability.ok and kind == "services":
        # A server also needs its binary, which only the service itself can find.
        availability = info.cls().availability()
    return {"name": info.name, "available": availability.ok, "reason": availability.reason, "summary": info.summary}


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "list", help="show suites, codecs, stores and other plugins, and whether each can run here",
        description="Show every registered plugin, whether it is available on this machine and, if not, "
        "what to install; or, with 'settings', every plugin setting --set takes, with its default. "
        "Nothing optional is imported to find out.",
    )
    parser.add_argument("kind", nargs="?",
                        help="only this kind: suites, codecs, compressors, stores, mappers, datasets; or settings")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from stratabench.errors import UsageError

    if args.kind and args.kind.lower() in ("settings", "setting"):
        settings = _settings()
        if args.json:
            print(json.dumps({"settings": settings}, indent=2))
        else:
            _print_settings(settings)
        return 0
    kinds = registries()
    if args.kind:
        kinds = [(name, registry) for name, registry in kinds if name.startswith(args.kind.lower())]
        if not kinds:
            raise UsageError(
                f"unknown kind {args.kind!r}; choose one of: suites, codecs, compressors, stores, mappers, settings"
            )
    listing = {kind: [_entry(kind, info) for info in registry] for kind, registry in kinds}
    if args.json:
        print(json.dumps(listing, indent=2))
        return 0
    for kind, plugins in listing.items():
        print(kind)
        width = max((len(str(p["name"])) for p in plugins), default=0)
        for plugin in plugins:
            state = "yes" if plugin["available"] else "no "
            detail = plugin["summary"] if plugin["available"] else f"{plugin['summary']} ({plugin['reason']})"
            print(f"  {plugin['name']:<{width}}  {state}  {detail}".rstrip())
        if not plugins:
            print("  (none)")
    return 0
