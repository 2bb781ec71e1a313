"""``stratabench dataset NAME``: print a dataset's canonical hash, or export it."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from stratabench.cli.arguments import positive_int
from stratabench.errors import OutputError, OutputExistsError

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "dataset", help="print a dataset's canonical hash, or export it in a codec's format",
        description="Generate a dataset (a pure function of size and seed), print the SHA-1 of its canonical "
        "form, and optionally write it to a file in any codec's format.",
    )
    parser.add_argument("name", help="the dataset, e.g. bulkload")
    parser.add_argument("--size", type=positive_int, metavar="N", help="records (default: the study's)")
    parser.add_argument("--seed", type=int, metavar="S", help="seed (default: the study's)")
    parser.add_argument("--export", metavar="CODEC[/MODE]", help="also write the records in this codec's format")
    parser.add_argument("--out", metavar="FILE", help="where --export writes (an existing file is refused)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from stratabench.datasets import DATASETS
    from stratabench.errors import UsageError

    entry = DATASETS.get(args.name)()
    size = args.size or entry.default_size
    seed = entry.default_seed if args.seed is None else args.seed
    rows = entry.rows(size, seed)
    print(entry.canonical_hash(rows))
    if args.export is None:
        if args.out is not None:
            raise UsageError("--out needs --export CODEC to say which format to write")
        return 0
    if args.out is None:
        raise UsageError("--export needs --out FILE")
    from stratabench.layers.codecs import make_format

    codec, _, mode = args.export.partition("/")
    out = Path(args.out)
    if out.exists():
        raise OutputExistsError(f"{out} exists; choose another --out")
    with tempfile.TemporaryDirectory() as workdir:
        data = make_format(codec, entry.schema, mode or None, workdir=Path(workdir)).encode(rows)
    try:
        out.write_bytes(data)
    except OSError as error:
        raise OutputError(f"cannot write {out}: {error.strerror}") from None
    return 0
