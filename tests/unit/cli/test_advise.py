"""``stratabench advise``: bad input is one line saying what to fix; a small real run recommends, with evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stratabench.cli.main import main
from stratabench.services.ports import free_port
from stratabench.services.session import local_services


@pytest.fixture
def records(tmp_path: Path) -> Path:
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps({"id": i, "name": f"user {i}", "score": i / 7, "tags": ["a", "b"][: i % 3]})
                            + "\n" for i in range(300)))
    return path


@pytest.mark.parametrize(("arguments", "message", "code"), [
    (["--goal", "p99<2"], "error: --goal 'p99<2': 'p99<2' needs a unit: ns, us, µs, ms, s", 2),
    (["--goal", "speed<2ms"], "error: --goal 'speed<2ms': unknown measure 'speed'; use p50, p99, memory, stored or", 2),
    (["--price", "cpu=1"], "error: --price 'cpu=1': expected NAME=DOLLARS with NAME one of cpu_hour, wire_gb", 2),
    (["--store", "nosuch://x"], "error: ", 2),
    (["--cache-tier", "disk"], "error: --cache-tier disk: no such tier; use memory, memcached, redis", 2),
    (["--hit-ratio", "1.5"], "error: stratabench advise: argument --hit-ratio: '1.5' is out of range: use a share "
                             "of reads above 0, up to 1", 2),
])  # fmt: skip
def test_bad_input_is_one_line_and_nothing_is_written(records: Path, tmp_path: Path, arguments: list[str],
                                                      message: str, code: int,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "out.jsonl"
    assert main(["advise", "--data", str(records), "-o", str(output), *arguments]) == code
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err
    assert not output.exists()


def test_an_empty_file_says_what_to_give(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code = main(["advise", "--data", str(empty), "-o", str(tmp_path / "out.jsonl"), "-q"])
    err = capsys.readouterr().err
    assert code == 65
    assert err == f"error: {empty}: no records (the file is empty); give one JSON object per line, or a CSV header " \
                  "and rows\n"


def test_an_unreachable_store_says_what_to_fix_before_measuring(records: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    code = main(["advise", "--data", str(records), "--store", url, "-o", str(tmp_path / "out.jsonl"), "-q"])
    err = capsys.readouterr().err
    assert code != 0 and err.count("\n") == 1, err
    assert err.startswith(f"error: --store {url}: cannot connect to redis") and "--store URL" in err
    cells = [line for line in (tmp_path / "out.jsonl").read_text().splitlines() if '"type":"cell"' in line]
    assert cells == [], "nothing is measured when a store cannot be reached"


def test_a_small_run_recommends_with_evidence_and_a_page(records: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Embedded stores, two codecs, two compressors: a recommendation, its evidence, the runner-up, a chart."""
    output = tmp_path / "out.jsonl"
    code = main(["advise", "--data", str(records), "--codec", "json,pickle", "--compressor", "none,zlib",
                 "--goal", "p99<1s", "-o", str(output), "-q", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    (suite,) = data["suites"]
    answer = suite["answer"]
    recommended = answer["picks"][0]
    assert recommended["setting"] == "recommended for 'p99<1.000 s, cheapest'"
    assert " on " in recommended["choice"] and "p99" in recommended["measured"]
    # The candidates' single reads were measured in the same rounds: their costs pair up round by round.
    assert recommended["ratio"]["paired"] and recommended["ratio"]["n"] >= 2
    assert any(line.startswith("Use ") for line in answer["summary"])
    assert any("Prices: $0.04 per vCPU-hour" in line for line in answer["lines"])
    loads = [json.loads(line) for line in output.read_text().splitlines() if '"suite":"load"' in line]
    assert loads and all(cell["integrity"]["ok"] for cell in loads if cell.get("integrity"))
    assert ["candidate", recommended["choice"]] in [cell["notes"]["subject"] for cell in loads]
    code = main(["report", str(output), "--format", "markdown"])
    assert code == 0  # the results file reads back as any other, the finalists' load runs by candidate
    report = capsys.readouterr().out
    load_table = report[report.index("load: "):]
    assert "candidate" in load_table and recommended["choice"] in load_table, load_table


def test_a_cache_server_asked_for_as_a_tier_must_be_among_the_stores(records: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["advise", "--data", str(records), "--cache-tier", "memory,memcached", "-o",
                 str(tmp_path / "out.jsonl"), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and err == "error: --cache-tier memcached: no such server among the stores; give its URL " \
                                "with --store, or --services local\n", err


def test_memory_and_a_real_redis_are_weighed_as_tiers_in_front_of_the_store_by_paired_ratios(
        records: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Redis started by the project's services code, named as a tier: it is weighed as a cache in front of the
    recommended embedded store, as is the in-process memory tier, each placed in the same rounds as the stores."""
    output = tmp_path / "out.jsonl"
    with local_services(["redis"]) as running:
        code = main(["advise", "--data", str(records), "--store", running["redis"].url, "--codec", "json,pickle",
                     "--compressor", "none", "--cache-tier", "memory,redis", "--hit-ratio", "0.8", "-o", str(output),
                     "-q", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    answer = data["suites"][0]["answer"]
    recommended = answer["picks"][0]
    store = recommended["choice"].rsplit(" on ", 1)[1]
    assert store in ("sqlite", "lmdb"), recommended  # a tier is never the store
    tiers = [pick for pick in answer["picks"] if pick["setting"].startswith("cache tier")]
    assert [pick["compared"][0][0].split()[:2] for pick in tiers] == [["get_one", "memory"], ["get_one", "redis"]]
    for pick in tiers:
        assert pick["setting"] == f"cache tier in front of {recommended['choice']} at 80% hits"
        assert pick["compared"][0][1].startswith(f"get_one {store} ")
        assert pick["choice"].startswith(("put ", "no ")) or "in front or not" in pick["choice"], pick
        assert pick["ratio"]["paired"] and pick["ratio"]["n"] >= 2 and pick["sure"]
    assert any(line.startswith("A cache tier assumes 80% of reads hit it") for line in answer["lines"])
