"""The incremental core against the study's: same verdicts, same messages, same trees, and the base untouched.

Random valid trees of a schema with every shape the tree model supports
(non-presence and presence containers, system- and user-ordered lists and
leaf-lists, lists inside lists), then random commits of random edits,
applied on both cores side by side. Chunks are made tiny so that lists of
a few entries already span several chunks, split and empty.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from stratabench.errors import StratabenchError
from stratabench.systems.treestore import persistent
from stratabench.systems.treestore.backends.json_file import JsonFileBackend
from stratabench.systems.treestore.backends.sqlite import SqliteBackend
from stratabench.systems.treestore.core import Core, stored_tree
from stratabench.systems.treestore.cores import IncrementalCore, SysrepoCore
from stratabench.suites.treestore.dataset import Dataset
from stratabench.systems.treestore.diff import Diff, apply_delete, apply_merge, apply_set
from stratabench.systems.treestore.paths import parse
from stratabench.systems.treestore.persistent import Chunked
from stratabench.systems.treestore.schema import PERF, STRING, UINT32, container, keyed_list, leaf, leaf_list, module
from stratabench.systems.treestore.tree import Inner, from_document, to_document, tree_hash
from stratabench.systems.treestore.validate import ValidationError, validate

SHAPES = module("t", [
    container("box", [leaf("flag", STRING), leaf_list("nums", UINT32),
                      leaf_list("order", STRING, user_ordered=True)]),
    keyed_list("lst", ("a",), [leaf("a", UINT32), leaf("b", STRING),
                               container("inner", [leaf("x", UINT32), leaf_list("tags", STRING)]),
                               keyed_list("sub", ("s",), [leaf("s", STRING), leaf("v", UINT32)])]),
    keyed_list("uo", ("k",), [leaf("k", STRING), leaf("v", UINT32)], user_ordered=True),
    container("pres", [leaf("n", UINT32)], presence=True),
])

NUMBERS = st.integers(0, 12)
WORDS = st.sampled_from(["p", "q", "r", "s", "t"])
UINT_VALUES = st.one_of(NUMBERS, st.sampled_from([-1, 2**32]))      # some out of range
TEXT_VALUES = st.one_of(WORDS, st.just(7))                           # an int where a string belongs


def _documents(valid: bool) -> st.SearchStrategy[dict[str, Any]]:
    uint = NUMBERS if valid else UINT_VALUES
    text = WORDS if valid else TEXT_VALUES
    inner = st.fixed_dictionaries({}, optional={"x": uint, "tags": st.lists(WORDS, max_size=3, unique=True)})
    sub = st.fixed_dictionaries({"s": WORDS}, optional={"v": uint})
    entry = st.fixed_dictionaries({"a": NUMBERS}, optional={
        "b": text, "inner": inner.filter(bool), "sub": st.lists(sub, max_size=3, unique_by=lambda e: e["s"])})
    box = st.fixed_dictionaries({}, optional={"flag": text, "nums": st.lists(NUMBERS, max_size=4, unique=True),
                                             "order": st.lists(WORDS, max_size=4, unique=True)}).filter(bool)
    return st.fixed_dictionaries({}, optional={
        "t:box": box,
        "t:lst": st.lists(entry, max_size=12, unique_by=lambda e: e["a"]),
        "t:uo": st.lists(st.fixed_dictionaries({"k": WORDS}, optional={"v": uint}), max_size=5,
                         unique_by=lambda e: e["k"]),
        "t:pres": st.fixed_dictionaries({}, optional={"n": uint}),
    })


def _key(number: int | str) -> str:
    return f"'{number}'"


PATHS = st.one_of(
    st.builds(lambda: ("/t:box", None)),
    st.builds(lambda v: ("/t:box/flag", v), TEXT_VALUES),
    st.builds(lambda n: (f"/t:box/nums[.={_key(n)}]", None), st.one_of(NUMBERS, st.just(2**32))),
    st.builds(lambda w: (f"/t:box/order[.={_key(w)}]", None), WORDS),
    st.builds(lambda a: (f"/t:lst[a={_key(a)}]", None), st.one_of(NUMBERS, st.just(2**32))),
    st.builds(lambda a, v: (f"/t:lst[a={_key(a)}]/b", v), NUMBERS, TEXT_VALUES),
    st.builds(lambda a: (f"/t:lst[a={_key(a)}]/inner", None), NUMBERS),
    st.builds(lambda a, v: (f"/t:lst[a={_key(a)}]/inner/x", v), NUMBERS, UINT_VALUES),
    st.builds(lambda a, w: (f"/t:lst[a={_key(a)}]/inner/tags[.={_key(w)}]", None), NUMBERS, WORDS),
    st.builds(lambda a, s, v: (f"/t:lst[a={_key(a)}]/sub[s={_key(s)}]/v", v), NUMBERS, WORDS, UINT_VALUES),
    st.builds(lambda k, v: (f"/t:uo[k={_key(k)}]/v", v), WORDS, UINT_VALUES),
    st.builds(lambda v: ("/t:pres/n", v), UINT_VALUES),
    st.builds(lambda: ("/t:pres", None)),
)
DELETES = st.one_of(PATHS.map(lambda pair: pair[0]),
                    st.sampled_from(["/t:lst", "/t:uo", "/t:box/nums", "/t:box/order", "/t:box"]))
EDITS = st.one_of(
    st.builds(lambda pv, strict: ("set", pv[0], pv[1], strict), PATHS, st.booleans()),
    st.builds(lambda path: ("delete", path), DELETES),
    st.builds(lambda document: ("merge", document), _documents(valid=False)),
)
COMMITS = st.lists(st.lists(EDITS, min_size=1, max_size=6), min_size=1, max_size=6)


@pytest.fixture(autouse=True)
def tiny_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(persistent, "CHUNK", 2)


def _parsed(edits: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Edits as a session holds them (paths parsed); merged documents copied, as a tree takes their objects in."""
    return [(edit[0], parse(SHAPES, edit[1]), *edit[2:]) if edit[0] != "merge" else copy.deepcopy(edit)
            for edit in edits]


def _commit(base: Inner, edits: list[tuple[Any, ...]], core: SysrepoCore | IncrementalCore
            ) -> tuple[Inner | None, str, dict[str, Any] | None]:
    """One commit on ``core``: (the new tree if accepted, what happened, the diff's document)."""
    work = core.working_copy(base, edits)
    assert work is not None
    diff = Diff(SHAPES)
    try:
        for edit in edits:
            if edit[0] == "set":
                apply_set(work, edit[1], edit[2], diff, strict=edit[3])
            elif edit[0] == "delete":
                apply_delete(work, edit[1], diff)
            else:
                apply_merge(work, edit[1], diff)
    except StratabenchError as exc:
        return None, f"edit refused: {exc.message}", None
    if not diff:
        return None, "no change", diff.document()
    try:
        core.check(work, diff)
    except ValidationError as exc:
        return None, f"invalid: {exc.message}", diff.document()
    return work, "accepted", diff.document()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents(valid=True), COMMITS)
def test_incremental_validation_judges_every_commit_as_the_full_pass_and_builds_the_same_trees(
        document: dict[str, Any], commits: list[list[tuple[Any, ...]]]) -> None:
    start = from_document(SHAPES, document)
    assume(start is not None)
    assert start is not None
    validate(start)
    full_base, incremental_base = start, start
    for edits in commits:
        before = to_document(incremental_base)
        full_tree, full_said, full_diff = _commit(full_base, _parsed(edits), SysrepoCore())
        incremental_tree, incremental_said, incremental_diff = _commit(incremental_base, _parsed(edits),
                                                                       IncrementalCore())
        assert incremental_said == full_said
        assert incremental_diff == full_diff
        assert to_document(incremental_base) == before  # the version a commit started from is untouched
        if full_tree is not None and incremental_tree is not None:
            assert to_document(incremental_tree) == to_document(full_tree)
            validate(incremental_tree)
            full_base, incremental_base = full_tree, incremental_tree


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["insert", "pop", "replace"]), st.integers(0, 40)), max_size=80),
       st.booleans())
def test_a_chunked_map_is_an_ordered_dict_and_its_forks_never_see_each_others_changes(
        operations: list[tuple[str, int]], sorted_: bool) -> None:
    model: dict[tuple[int], int] = {}
    chunked = Chunked.of({}, sorted=sorted_)
    versions: list[tuple[Chunked, list[tuple[tuple[int], int]]]] = []
    for step, (operation, number) in enumerate(operations):
        key = (number,)
        if step % 5 == 0:  # keep this version; change a fork from now on
            versions.append((chunked, list(model.items())))
            chunked = chunked.fork()
        if operation == "insert" and key not in model:
            chunked.insert(key, step)
            model[key] = step
            if sorted_:
                model = dict(sorted(model.items()))
        elif operation == "pop" and key in model:
            assert chunked.pop(key) == model.pop(key)
        elif operation == "replace" and key in model:
            chunked[key] = model[key] = -step
        assert list(chunked.items()) == list(model.items())
        assert len(chunked) == len(model) and all(chunked.get(k) == v for k, v in model.items())
        assert list(reversed(chunked)) == list(reversed(model))
    for version, items in versions:
        assert list(version.items()) == items


def _cores(tmp_path: Path, backend: type[JsonFileBackend] | type[SqliteBackend]) -> Iterator[Core]:
    for name in ("sysrepo", "incremental"):
        (tmp_path / name).mkdir()
        core = Core(backend(f"inc{name[:3]}", directory=tmp_path / name), SHAPES, name)
        core.install()
        yield core


@pytest.mark.parametrize("backend", [JsonFileBackend, SqliteBackend])
def test_cached_commits_on_both_cores_store_the_same_trees_and_refuse_with_the_same_line(
        tmp_path: Path, backend: type[JsonFileBackend] | type[SqliteBackend]) -> None:
    cores = list(_cores(tmp_path, backend))
    sessions = [core.connect(cache=True).session() for core in cores]
    try:
        commits: list[list[tuple[Any, ...]]] = [
            [("merge", {"t:lst": [{"a": i, "b": f"w{i}", "sub": [{"s": "p", "v": i}]} for i in range(20)]})],
            [("set", "/t:lst[a='7']/b", "changed")],
            [("set", "/t:lst[a='30']/inner/x", 3), ("delete", "/t:lst[a='2']")],
            [("set", "/t:lst[a='9']/sub[s='p']/v", 2**32)],          # refused: out of uint32
            [("set", "/t:lst[a='4']/b", 5), ("set", "/t:pres/n", -1)],  # refused: the first in tree order is named
            [("set", "/t:box", None)],                                 # refused: an empty non-presence container
            [("delete", "/t:lst"), ("set", "/t:uo[k='z']/v", 1)],
        ]
        for edits in commits:
            said = []
            for session in sessions:
                for edit in edits:
                    if edit[0] == "set":
                        session.set(edit[1], edit[2])
                    elif edit[0] == "delete":
                        session.delete(edit[1])
                    else:
                        session.merge(edit[1])
                try:
                    said.append(f"stored: {session.commit()}")
                except ValidationError as exc:
                    assert "\n" not in exc.message
                    said.append(exc.message)
            assert said[0] == said[1], edits
            assert tree_hash(stored_tree(cores[0])) == tree_hash(stored_tree(cores[1]))
        assert said == ["stored: True", "stored: True"]
    finally:
        for core in cores:
            core.uninstall()
            core.close()
            core.backend.cleanup()


def test_a_cached_commit_of_one_leaf_shares_every_entry_it_does_not_change(tmp_path: Path) -> None:
    core = Core(SqliteBackend("incshare", directory=tmp_path), PERF, "incremental")
    core.install()
    try:
        session = core.connect(cache=True).session()
        data = Dataset(3000)
        session.merge(data.lst_document())
        session.commit()
        session.set(data.p_m, "l1")  # the first fork makes the cached list chunked
        session.commit()
        assert session.conn.cached is not None
        before = session.conn.cached[1]
        assert before is not None
        session.set(data.p_m, "l2")
        session.commit()
        after = session.conn.cached[1]
        assert after is not None and after is not before
        old, new = before.children["cont"].children["lst"].entries, after.children["cont"].children["lst"].entries
        assert isinstance(old, Chunked) and isinstance(new, Chunked)
        changed = [key for key in new if new[key] is not old[key]]
        assert changed == [(data.n // 2, f"str{data.n // 2}")]
        assert old[changed[0]].children["l"] == "l1" and new[changed[0]].children["l"] == "l2"
        shared_chunks = sum(1 for a, b in zip(old._chunks, new._chunks) if a is b)
        assert shared_chunks == len(new._chunks) - 1
    finally:
        core.uninstall()
        core.close()
        core.backend.cleanup()
