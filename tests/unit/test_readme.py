"""Every example in the README works: commands parse, scripts exist, Python runs.

A code block of a kind this test does not know fails it, so a new example
cannot be added without being checked here.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from stratabench.cli.main import build_parser

ROOT = Path(__file__).parents[2]
BLOCKS = re.findall(r"```(\w*)\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def commands(kind: str) -> list[str]:
    lines = [line.split("#", 1)[0].strip() for _, body in (b for b in BLOCKS if b[0] == kind) for line in body.splitlines()]
    return [line for line in lines if line]


def test_every_block_is_of_a_checked_kind() -> None:
    assert BLOCKS, "the README has no examples"
    assert {kind for kind, _ in BLOCKS} <= {"sh", "python", ""}


def test_it_opens_with_the_two_setup_commands() -> None:
    first_kind, first_body = BLOCKS[0]
    assert first_kind == "sh"
    assert [line.split()[0] for line in first_body.strip().splitlines()] == ["scripts/run", "scripts/test"]


@pytest.mark.parametrize("line", commands("sh"))
def test_shell_examples_are_real(line: str) -> None:
    words = shlex.split(line)
    if words[0].startswith("scripts/"):
        assert (ROOT / words[0]).is_file() and (ROOT / words[0]).stat().st_mode & 0o111, words[0]
        return
    assert words[0] == "stratabench", f"unchecked example: {line}"
    build_parser().parse_args(words[1:])  # an unknown option or command exits here


@pytest.mark.parametrize("index", [i for i, (kind, _) in enumerate(BLOCKS) if kind == "python"])
def test_python_examples_run(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(BLOCKS[index][1], f"README block {index}", "exec"), {})
    assert "median" in capsys.readouterr().out
