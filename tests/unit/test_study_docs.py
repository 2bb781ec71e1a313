"""Comments cite the study write-ups in docs/studies/, and every section they cite exists there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs" / "studies"
SOURCES = sorted(p for top in ("src", "go", "benchmarks") for p in (ROOT / top).rglob("*")
                 if p.suffix in (".py", ".go"))  # fmt: skip
CITATION = re.compile(r"docs/studies/(\w+)\.md(?:``)?(?:'s)? §(\d+(?:\.\d+)*)")


def _sections(doc: Path) -> set[str]:
    return set(re.findall(r"^#{2,4} (\d+(?:\.\d+)*)\.? ", doc.read_text(), re.M))


def test_every_study_has_its_write_up() -> None:
    from stratabench.suites import SUITES

    studies = {name for name in SUITES.names if name not in ("load", "matrix", "timeit")}
    assert studies <= {doc.stem for doc in DOCS.glob("*.md")}


def test_no_comment_points_outside_the_repository() -> None:
    outside = re.compile(r"spec §|spec parking\.md|specs/\w+\.md|shared/specs")
    found = [f"{p.relative_to(ROOT)}:{n}" for p in SOURCES for n, line in enumerate(p.read_text().splitlines(), 1)
             if outside.search(line)]  # fmt: skip
    assert found == []


@pytest.mark.parametrize("doc", sorted(DOCS.glob("*.md")), ids=lambda p: p.stem)
def test_every_cited_section_exists(doc: Path) -> None:
    sections = _sections(doc)
    cited = {(str(p.relative_to(ROOT)), m.group(2)) for p in SOURCES for m in CITATION.finditer(p.read_text())
             if m.group(1) == doc.stem}  # fmt: skip
    missing = sorted(f"{path} cites §{number}" for path, number in cited if number not in sections)
    assert cited and missing == []
