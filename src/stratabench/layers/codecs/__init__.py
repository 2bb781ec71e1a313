"""The codec plugins: one module per codec, registered with ``@CODECS.register``; a codec by name.

The contract (:mod:`.base`) never looks a codec up by name; that is done
here, beside the registry (:func:`make_format`), so the two do not import
each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stratabench.registry import Registry

if TYPE_CHECKING:
    from pathlib import Path

    from stratabench.datasets.schema import Schema
    from stratabench.layers.codecs.base import Codec, Format

__all__ = ["CODECS", "make_format"]

CODECS: Registry[type[Codec]] = Registry("codec", __name__)


def make_format(codec: str, schema: Schema, mode: str | None = None, *, workdir: Path | None = None) -> Format:
    """Look up ``codec`` in the registry and prepare it: the suites' entry point.

    Raises
    ------
    UnknownNameError
        If no codec is registered as ``codec``.
    UnavailableError
        If its package is missing or it cannot carry the schema.
    UsageError
        If it has no such mode.
    """
    codec_class = CODECS.get(codec)
    instance: Codec = codec_class()
    return instance.format(schema, mode, workdir=workdir)
