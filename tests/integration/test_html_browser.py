"""The HTML report in a real headless browser: it loads offline, clean, with every chart and mark.

A quick real bulkload run at two sizes (a few Python codecs, one inexact
mode that fails its check on purpose, Go's JSON) gives a results file with
every kind of chart: time against size, growth with the size, time per cell
with a failed row. The page rendered from it is opened from ``file://`` in
Debian's chromium headless shell, driven by Selenium through Debian's
chromedriver (Selenium never downloads a browser here). The test keeps a
screenshot of the whole page, in pytest's temporary directory and in
``results/artifacts/html-report.png``, and prints where.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stratabench.cli.main import main
from stratabench.results.format import load
from stratabench.results.records import CellResult
from stratabench.suites.bulkload.report import fair
from tests.availability import unavailable

# `dpkg -L chromium-headless-shell`: the browser itself. /usr/bin/chromium-headless-shell is a sh
# script that runs it without exec, so chromedriver's quit ended the script and left the browser
# and its five children running under init after the suite.
CHROMIUM = "/usr/lib/chromium/chromium-headless-shell"
ARTIFACT = Path(__file__).resolve().parents[2] / "results" / "artifacts" / "html-report.png"
SIZES = (300, 900)
QUICK = ["--codec", "json", "--codec", "msgpack", "--codec", "pickle", "--codec", "embed",
         "--codec", "msgspec.json", "--set", "bulkload.inexact=yes", "--set", "go.formats=json",
         "--set", "go.variants=warm", "--samples", "5", "--min-time", "0.002", "--memory-samples", "0",
         "--in-process", "-q"]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[CellResult]]:
    """The HTML page of a two-size bulkload run, and the run's results."""
    directory = tmp_path_factory.mktemp("html-report")
    lines: list[str] = []
    for size in SIZES:
        output = directory / f"bulkload-{size}.jsonl"
        assert main(["run", "bulkload", "--size", str(size), "-o", str(output), *QUICK]) in (0, 1)
        text = output.read_text(encoding="utf-8").splitlines()
        lines += text if not lines else text[1:]  # one header, every cell of both runs
    combined = directory / "bulkload-sizes.jsonl"
    combined.write_text("\n".join(lines) + "\n", encoding="utf-8")
    html = directory / "report.html"
    assert main(["report", str(combined), "--format", "html", "-o", str(html)]) == 0
    return html, list(load(combined).cells)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    driver_path = shutil.which("chromedriver")
    if not os.path.exists(CHROMIUM) or driver_path is None:
        unavailable("no headless chromium: scripts/install-servers.sh installs chromium-headless-shell "
                    "and chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,900"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # chromedriver in a process group of its own, which the browser's processes join: whatever
    # happens (quit fails, the driver or the browser hangs), the group is killed at the end.
    service = Service(executable_path=driver_path, popen_kw={"start_new_session": True})
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SE_OFFLINE", "true")  # Selenium Manager must never look for a browser online
        try:
            driver = webdriver.Chrome(options=options, service=service)
            try:
                yield driver
            finally:
                driver.quit()
        finally:
            _kill_process_group(service)


def _kill_process_group(service: Any) -> None:
    """SIGKILL what is left of the driver's process group (nothing, when quit did its job)."""
    process = getattr(service, "process", None)  # None: chromedriver never started
    if process is None:
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # the group is empty: quit ended the driver and the browser


def _measured(cells: list[CellResult], *metrics: str) -> list[CellResult]:
    return [c for c in cells if c.status in ("ok", "failed") and all(c.median(m) is not None for m in metrics)]


def _not_dominated(cells: list[CellResult]) -> int:
    """How many ok cells no other ok cell beats on both time and size (checked pair by pair)."""
    points = [(c.median("wall_ns") or 0.0, c.median("size_bytes") or 0.0) for c in cells if c.ok]
    return sum(1 for x, y in points
               if not any(a <= x and b <= y and (a, b) != (x, y) for a, b in points))


def _count(driver: Any, chart: str, kind: str) -> int:
    return int(driver.execute_script(
        "return document.querySelectorAll(`figure#${arguments[0]} svg g[id^='${arguments[0]}-mark-${arguments[1]}-']`)"
        ".length", chart, kind))


def test_the_page_in_a_real_browser(page: tuple[Path, list[CellResult]], browser: Any) -> None:
    html, cells = page
    browser.get(html.as_uri())
    assert browser.title == "stratabench report"

    errors = [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]
    assert errors == [], errors
    # Self-contained: the page fetched nothing, not a font, not an image.
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0

    charts = browser.execute_script("return [...document.querySelectorAll('figure.chart')].map(f => f.id)")
    # The run was measured in rounds, so the page opens with the reference workload's speed over the run.
    assert charts == ["machine-speed", "bulkload-tradeoff", "bulkload-growth", "bulkload-load-time-per-operation",
                      "bulkload-encode-time-per-operation"]

    # Cells are compared at the largest size; the growth chart has both. Loads and encodes are charted
    # apart, and the trade-off compares only rows that load every field (no resident or parse-only row).
    everywhere = {c.cell for c in cells if c.params["size"] == SIZES[0]} & {c.cell for c in cells
                                                                             if c.params["size"] == SIZES[-1]}
    largest = [c for c in cells if c.cell not in everywhere or c.params["size"] == SIZES[-1]]
    both = _measured(fair(largest), "wall_ns", "size_bytes")
    failed = [c for c in largest if c.status == "failed"]
    assert failed, "the inexact msgspec.json mode was meant to fail its check"
    measured = _measured(cells, "wall_ns")
    twice = {c.cell for c in measured if c.params["size"] == SIZES[0]} & {c.cell for c in measured
                                                                          if c.params["size"] == SIZES[-1]}
    expected = {
        "bulkload-tradeoff": {"point": len(both),
                              "frontier": sum(_not_dominated([c for c in both if c.params["direction"] == way])
                                              for way in ("load", "encode")),
                              "failed": sum(1 for c in both if not c.ok)},
        "bulkload-growth": {"line": len(twice), "point": len(twice) * len(SIZES),
                            "failed": sum(1 for c in measured if not c.ok and c.cell in twice)},
    }
    for way in ("load", "encode"):
        timed = _measured([c for c in largest if c.params["direction"] == way], "wall_ns")
        expected[f"bulkload-{way}-time-per-operation"] = {
            "bar": len(timed), "whisker": len(timed),
            "failed": sum(1 for c in failed if c.params["direction"] == way)}
    counted = {chart: {kind: _count(browser, chart, kind) for kind in kinds} for chart, kinds in expected.items()}
    print("marks counted:", json.dumps(counted))
    assert counted == expected
    for chart, kinds in expected.items():  # what the page says it drew, beside what the browser finds
        for kind, count in kinds.items():
            declared = browser.execute_script(
                "return document.getElementById(arguments[0]).dataset[arguments[1]] || '0'", chart, kind)
            assert int(declared) == count, (chart, kind)
        size = browser.execute_script(
            "const r = document.querySelector(`figure#${arguments[0]} svg`).getBoundingClientRect();"
            "return [r.width, r.height]", chart)
        assert 300 < size[0] <= 1000 and 100 < size[1] < 1400, (chart, size)  # drawn, and not a wall

    links = browser.execute_script(
        "return [...document.querySelectorAll('nav.contents a')].map(a => a.getAttribute('href'))")
    assert len(links) >= 4 and all(link.startswith("#") for link in links)
    missing = browser.execute_script(
        "return arguments[0].filter(h => !document.getElementById(h.slice(1)))", links)
    assert missing == []
    environment = browser.execute_script(
        "return [...document.querySelectorAll('header dl.environment dt')].map(d => d.textContent)")
    assert {"date", "machine", "software", "packages"} <= set(environment)

    # The full table sorts by a column on a click: its raw values, not their text.
    column = browser.execute_script(
        "return [...document.querySelectorAll('table.sortable th')].findIndex(th => th.textContent === 'size')")
    assert column > 0
    browser.execute_script("document.querySelectorAll('table.sortable th')[arguments[0]].click()", column)
    sizes = browser.execute_script(
        "return [...document.querySelectorAll('table.sortable tbody tr')]"
        ".map(tr => tr.cells[arguments[0]].dataset.sort).filter(v => v !== undefined).map(Number)", column)
    assert len(sizes) > 5 and sizes == sorted(sizes)
    browser.execute_script("document.querySelectorAll('table.sortable th')[arguments[0]].click()", column)
    again = browser.execute_script(
        "return [...document.querySelectorAll('table.sortable tbody tr')]"
        ".map(tr => tr.cells[arguments[0]].dataset.sort).filter(v => v !== undefined).map(Number)", column)
    assert again == sorted(sizes, reverse=True)

    height = int(browser.execute_script("return document.documentElement.scrollHeight"))
    browser.set_window_size(1280, min(height + 40, 16000))
    shot = html.with_suffix(".png")
    assert browser.save_screenshot(str(shot))
    ARTIFACT.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shot, ARTIFACT)
    print(f"screenshot: {shot} and {ARTIFACT} ({height} px tall)")
    assert shot.stat().st_size > 20_000
