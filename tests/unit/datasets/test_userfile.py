"""Users' JSON Lines and CSV files: schema inference, the hash, and one-line errors with the line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stratabench.datasets.userfile import load_records
from stratabench.errors import DataError


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATABENCH_CACHE_DIR", str(tmp_path / "cache"))


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_json_lines_types_and_keys(tmp_path: Path) -> None:
    path = write(tmp_path, "a.jsonl", '{"id": 1, "first-name": "Ada", "score": 9.5, "ok": true, "tags": ["x"], '
                 '"class": 1}\n\n{"id": 2, "first-name": "Grace", "score": 8.0, "ok": false, "tags": [], '
                 '"extra": {"k": [1]}, "class": 2.5}\n')
    records = load_records(path)
    assert records.keys == ("id", "first-name", "score", "ok", "tags", "class", "extra")
    assert records.schema.names == ("id", "first_name", "score", "ok", "tags", "class_", "extra")
    assert [f.type for f in records.schema.fields] == ["int", "str", "float", "bool", "list_str", "any", "any"]
    assert records.rows == [(1, "Ada", 9.5, True, ["x"], 1, None), (2, "Grace", 8.0, False, [], 2.5, {"k": [1]})]


def test_csv_types_from_text(tmp_path: Path) -> None:
    path = write(tmp_path, "b.csv", 'id,price,flag,name,maybe,code\n1,1.50,true,"x, y",,007\n2,3,false,z,4,010\n')
    records = load_records(path)
    assert [f.type for f in records.schema.fields] == ["int", "float", "bool", "str", "any", "str"]
    assert records.rows == [(1, 1.5, True, "x, y", None, "007"), (2, 3.0, False, "z", 4, "010")]


def test_hash_is_over_the_files_own_keys_and_depends_on_types(tmp_path: Path) -> None:
    a = load_records(write(tmp_path, "a.jsonl", '{"a-b": 1}\n'))
    b = load_records(write(tmp_path, "b.jsonl", '{"a-b": 1.0}\n'))
    assert a.hash != b.hash
    assert a.canonical_hash([(1,)]) == a.hash
    with pytest.raises(TypeError):
        a.canonical_hash([(True,)])


def test_the_file_is_never_written(tmp_path: Path) -> None:
    path = write(tmp_path, "a.jsonl", '{"a": 1}\n')
    os.chmod(path, 0o444)
    before = path.stat().st_mtime_ns
    load_records(path)
    assert path.stat().st_mtime_ns == before and path.read_text() == '{"a": 1}\n'


@pytest.mark.parametrize("name, text, message", [
    ("bad.jsonl", '{"a": 1}\n{"a": \n', "bad.jsonl, line 2: not JSON"),
    ("array.jsonl", '{"a": 1}\n[1, 2]\n', "array.jsonl, line 2: expected a JSON object, got an array"),
    ("nan.jsonl", '{"a": NaN}\n', "nan.jsonl, line 1: NaN is not JSON"),
    ("big.jsonl", '{"a": 1e999}\n', "big.jsonl, line 1: 1e999 is too large"),
    ("empty.jsonl", "", "empty.jsonl: no records"),
    ("blank.csv", "\n\n", "blank.csv: no records"),
    ("header.csv", "a,b\n", "header.csv: no records"),
    ("ragged.csv", "a,b\n1,2\n3\n", "ragged.csv, line 3: 1 field, but the header has 2"),
    ("twice.csv", "a,a\n1,2\n", "twice.csv, line 1: column 'a' appears twice"),
])
def test_malformed_files_fail_with_file_and_line(tmp_path: Path, name: str, text: str, message: str) -> None:
    with pytest.raises(DataError) as caught:
        load_records(write(tmp_path, name, text))
    assert message in caught.value.message and "\n" not in caught.value.message


def test_text_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin.csv"
    path.write_bytes("a\nok\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(DataError, match="line 3: not UTF-8"):
        load_records(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such file"):
        load_records(tmp_path / "nope.jsonl")
