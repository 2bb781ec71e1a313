"""The treestore core on hand-built trees: canonical form, paths, diff, validation, commit, cache, events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stratabench.errors import DataError, UsageError
from stratabench.systems.treestore.backends.json_file import JsonFileBackend
from stratabench.systems.treestore.backends.sqlite import SqliteBackend
from stratabench.systems.treestore.core import Core, installed, stored_tree
from stratabench.suites.treestore.dataset import Dataset
from stratabench.systems.treestore.diff import CREATE, DELETE, NONE, REPLACE, Diff, EditError, apply_delete, apply_set
from stratabench.systems.treestore.paths import parse, result_tree, select
from stratabench.systems.treestore.schema import PERF
from stratabench.systems.treestore.tree import Inner, Instances, from_document, to_json, tree_hash
from stratabench.systems.treestore.validate import ValidationError, validate


def entries(*numbers: int) -> list[dict[str, Any]]:
    return [{"k1": i, "k2": f"str{i}", "l": f"l{i}"} for i in numbers]


def tree_of(*numbers: int) -> Inner:
    built = from_document(PERF, {"perf:cont": {"lst": entries(*numbers)}})
    assert built is not None
    return built


def ops(diff: Diff) -> list[tuple[str, str]]:
    return [(op, path) for op, _, path in diff.walk()]


def test_canonical_documents_have_the_sizes_of_the_spec() -> None:
    data = Dataset(1000)
    assert len(to_json(from_document(PERF, data.lst_document()))) == 35_693
    assert len(to_json(from_document(PERF, data.usr_document()))) == 20_807


def test_system_ordered_lists_come_out_sorted_by_typed_key() -> None:
    tree = tree_of(10, 2, 1)
    assert to_json(tree) == to_json(tree_of(1, 2, 10))  # 10 after 2: numeric, not textual


def test_a_path_and_the_equivalent_filter_select_the_same_leaf() -> None:
    tree = tree_of(*range(10))
    path = parse(PERF, "/perf:cont/lst[k1='5'][k2='str5']/l")
    filter_ = parse(PERF, "/perf:cont/lst[k1='5' and k2='str5']/l")
    assert path.exact and not filter_.exact
    assert select(tree, path)[0][1] == select(tree, filter_)[0][1] == "l5"
    assert to_json(result_tree(PERF, select(tree, filter_))) == b'{"perf:cont":{"lst":[{"k1":5,"k2":"str5","l":"l5"}]}}'


@pytest.mark.parametrize("text", ["perf:cont", "/other:cont", "/perf:cont/nope", "/perf:cont/lst[k1>'1']",
                                  "/perf:cont/lst[k1='1' or k2='a']"])
def test_selectors_outside_the_study_syntax_are_one_line_usage_errors(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse(PERF, text)
    assert "\n" not in str(caught.value)


def test_keys_in_another_order_make_a_filter_not_a_path() -> None:
    assert not parse(PERF, "/perf:cont/lst[k2='str5'][k1='5']").exact


def test_setting_a_leaf_builds_a_replace_under_unchanged_ancestors() -> None:
    tree, diff = tree_of(1, 2), Diff(PERF)
    apply_set(tree, parse(PERF, "/perf:cont/lst[k1='1'][k2='str1']/l"), "new", diff)
    assert ops(diff) == [(NONE, "/perf:cont"), (NONE, "/perf:cont/lst[k1='1'][k2='str1']"),
                         (REPLACE, "/perf:cont/lst[k1='1'][k2='str1']/l")]


def test_edits_that_change_nothing_leave_the_diff_empty() -> None:
    tree, diff = tree_of(1), Diff(PERF)
    apply_set(tree, parse(PERF, "/perf:cont/lst[k1='1'][k2='str1']/l"), "l1", diff)
    apply_delete(tree, parse(PERF, "/perf:cont/lst[k1='7'][k2='str7']/l"), diff)
    apply_delete(tree, parse(PERF, "/perf:cont/usr-lst"), diff)
    assert not diff


def test_a_node_created_and_deleted_in_one_commit_leaves_no_diff() -> None:
    tree, diff = tree_of(1), Diff(PERF)
    apply_set(tree, parse(PERF, "/perf:cont/lst[k1='9'][k2='str9']/l"), "x", diff)
    apply_delete(tree, parse(PERF, "/perf:cont/lst[k1='9'][k2='str9']"), diff)
    assert not diff


def test_edits_inside_a_created_subtree_are_covered_by_its_create() -> None:
    tree, diff = Inner(PERF, None), Diff(PERF)
    for i in range(3):
        apply_set(tree, parse(PERF, f"/perf:cont/lst[k1='{i}'][k2='str{i}']/l"), f"l{i}", diff)
    assert ops(diff) == [(CREATE, "/perf:cont")]
    assert to_json(tree) == to_json(tree_of(0, 1, 2))


def test_deleting_a_list_deletes_each_instance() -> None:
    tree, diff = tree_of(1, 2, 3), Diff(PERF)
    apply_delete(tree, parse(PERF, "/perf:cont/lst"), diff)
    assert [op for op, _ in ops(diff)] == [NONE, DELETE, DELETE, DELETE]
    assert to_json(tree) == b'{"perf:cont":{}}'


def test_a_strict_set_of_an_existing_leaf_fails() -> None:
    with pytest.raises(EditError):
        apply_set(tree_of(1), parse(PERF, "/perf:cont/lst[k1='1'][k2='str1']/l"), "x", Diff(PERF), strict=True)


def test_validation_accepts_the_dataset_and_an_empty_presence_container() -> None:
    validate(tree_of(*range(50)))
    validate(from_document(PERF, {"perf:cont": {}}))


@pytest.mark.parametrize("document, problem", [
    ({"perf:cont": {"lst": [{"k1": -1, "k2": "a"}]}}, "uint32"),
    ({"perf:cont": {"lst": [{"k1": 2**32, "k2": "a"}]}}, "uint32"),
    ({"perf:cont": {"lst": [{"k1": 1, "k2": 5}]}}, "string"),
    ({"perf:cont": {"lst": [{"k1": 1, "k2": "a", "zz": "b"}]}}, "zz"),
    ({"perf:cont": {"lst": [{"k1": 1, "k2": "a", "l": None}]}}, "string"),
    ({"perf:cont": {"lst": [{"k1": True, "k2": "a"}]}}, "uint32"),
])
def test_validation_rejects_bad_values_and_unknown_nodes(document: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        validate(from_document(PERF, document))


def test_validation_rederives_key_uniqueness_instead_of_trusting_the_dictionary() -> None:
    tree = tree_of(1, 2)
    instances = tree.children["cont"].children["lst"]
    assert isinstance(instances, Instances)
    second = instances.entries[(2, "str2")]
    second.children["k1"], second.children["k2"] = 1, "str1"  # the dict key still says (2, "str2")
    with pytest.raises(ValidationError, match="duplicate"):
        validate(tree)


def test_validation_tells_equal_first_keys_from_equal_key_tuples() -> None:
    tree = tree_of(1, 2)
    instances = tree.children["cont"].children["lst"]
    assert isinstance(instances, Instances)
    instances.entries[(2, "str2")].children["k1"] = 1  # k1 repeats, (k1, k2) does not
    validate(tree)
    instances.entries[(2, "str2")].children["k2"] = "str1"
    with pytest.raises(ValidationError, match="duplicate"):
        validate(tree)


def test_validation_rejects_an_entry_without_its_keys() -> None:
    tree = tree_of(1)
    instances = tree.children["cont"].children["lst"]
    del instances.entries[(1, "str1")].children["k2"]
    with pytest.raises(ValidationError, match="lacks a key"):
        validate(tree)


@pytest.fixture(params=["json-file", "sqlite"])
def core(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    backend_class = {"json-file": JsonFileBackend, "sqlite": SqliteBackend}[request.param]
    with installed(backend_class("unit", directory=tmp_path)) as core:
        yield core


@pytest.mark.parametrize(("merged", "message"), [
    ({"lst": [{"k1": [1], "k2": "a", "l": "x"}]}, "k1 is \\[1\\], not a uint32"),
    ({"lst": [{"k1": "z", "k2": "a", "l": "x"}]}, "k1 is 'z', not a uint32"),  # was a TypeError sorting 'z' after 1
    ({"lst": [{"k2": "a", "l": "x"}]}, "lacks its key k1"),
    ({"lst": [{"k1": 2, "k2": 3, "l": "x"}]}, "k2 is 3, not a string"),
    ({"lst": 5}, "expected an array, got int"),
    ({"lst": [5]}, "an entry is 5, not an object"),
])
def test_a_merge_of_a_malformed_document_is_a_data_error_and_stores_nothing(core: Core, merged: dict[str, Any],
                                                                           message: str) -> None:
    session = core.connect().session()
    session.merge({"perf:cont": {"lst": entries(1)}})
    session.commit()
    before = tree_hash(stored_tree(core))
    session.merge({"perf:cont": merged})
    with pytest.raises(DataError, match=message):
        session.commit()
    assert tree_hash(stored_tree(core)) == before


@pytest.mark.parametrize("document", [{"perf:cont": {"lst": [{"k1": [1], "k2": "a", "l": "x"}]}},
                                      {"perf:cont": {"lst": [{"k1": 1, "k2": "a", "l": "x"},
                                                             {"k1": "z", "k2": "a", "l": "x"}]}}])
def test_a_document_with_keys_that_cannot_be_compared_is_a_data_error(document: dict[str, Any]) -> None:
    with pytest.raises(DataError, match="lst: a key"):
        from_document(PERF, document)


def test_a_failed_validation_stores_nothing(core: Core) -> None:
    session = core.connect().session()
    session.merge({"perf:cont": {"lst": entries(1)}})
    session.commit()
    before = tree_hash(stored_tree(core))
    session.merge({"perf:cont": {"lst": [{"k1": 2, "k2": "b", "l": 7}]}})
    with pytest.raises(ValidationError):
        session.commit()
    assert tree_hash(stored_tree(core)) == before
    assert session.edits == []


def test_a_cached_connection_sees_commits_of_another_connection(core: Core) -> None:
    writer, reader = core.connect().session(), core.connect(cache=True).session()
    writer.merge({"perf:cont": {"lst": entries(1, 2)}})
    writer.commit()
    assert reader.get_item("/perf:cont/lst[k1='1'][k2='str1']/l") == "l1"
    writer.set("/perf:cont/lst[k1='1'][k2='str1']/l", "changed")
    writer.commit()
    assert reader.get_item("/perf:cont/lst[k1='1'][k2='str1']/l") == "changed"


def test_subscribers_receive_change_then_done_with_the_diff(core: Core) -> None:
    events: list[tuple[str, str]] = []
    listener = core.connect().session()
    listener.subscribe(lambda event, diff: events.append((event, diff["children"][0]["op"])))
    writer = core.connect().session()
    writer.merge({"perf:cont": {"lst": entries(1)}})
    writer.commit()
    assert events == [("change", "create"), ("done", "create")]
    writer.set("/perf:cont/lst[k1='1'][k2='str1']/l", "l1")
    assert writer.commit() is False
    assert len(events) == 2  # an empty diff notifies no one


def test_operational_views_merge_running_push_data_and_providers(core: Core) -> None:
    running = core.connect().session()
    running.merge({"perf:cont": {"lst": entries(1)}})
    running.commit()
    pusher = core.connect().session("operational")
    pusher.set("/perf:cont/lst[k1='1'][k2='str1']/l", "pushed")
    pusher.commit()
    provider = core.connect().session("operational")
    provider.provide("/perf:cont", lambda path: {"perf:cont": {"lst": entries(2)}})
    view = provider.get_data("/perf:cont")
    assert to_json(view) == b'{"perf:cont":{"lst":[{"k1":1,"k2":"str1","l":"pushed"},{"k1":2,"k2":"str2","l":"l2"}]}}'
    pusher.stop()
    assert stored_tree(core, "operational", pusher.owner) is None  # a stopped session's push data is gone
