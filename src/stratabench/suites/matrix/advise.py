"""``stratabench advise``: for these records, on these stores, toward this goal, what to use, with evidence.

It measures only what the choice needs, in three steps, each on the user's
own records (every read verified against their canonical hash):

1. **Screen** every codec × compressor that can carry the records: one
   record read and decoded from process memory (the matrix suite's
   ``get_one`` on the ``memory`` store): the decode time and the bytes a
   record takes. The time-vs-size frontier (none faster *and* smaller) gives
   the shortlist: the fastest, the smallest and one between.
2. **Place** the shortlist on every store (the user's servers, or the
   embedded ones when none is given), in one batch of cells so that every
   candidate is measured in the same rounds: one record read (``get_one``:
   client CPU, server CPU, time), every record read (``get_many``: the
   client's peak memory). A server that cannot take the records first (they
   are written twice and one read back) is left out, with its reason.
3. **Load** the finalists, the best few for the goal on single reads, with
   concurrent clients for a few seconds (:mod:`stratabench.load`): latency
   percentiles under load. A read's p50 and p99 are the store's under load
   plus the median time to decode one record (step 1).

Then the goal (:mod:`.goals`) picks: among the candidates that meet every
limit, the cheapest per million reads (or the fastest). The answer says the
recommendation, its evidence with intervals, the runner-up and what would
change the choice. The choice is compared with every other candidate meeting
the goal by a paired ratio (the cost of each round's reads, round by round);
one whose interval reaches within :data:`CLOSE` (5%) is *too close to call*,
and the answer names it and what the two share, so two runs never flip
silently (the fastest goal compares p99s over the load runs' seconds, which
ran one after the other: unpaired). A goal no candidate meets is refused,
with the closest candidate and its gap.

**Cache tiers** (``--cache-tier``, asked for): each tier is placed with the
shortlist in step 2, in the same rounds (``memory``: the matrix's in-process
store, as the cache study's instance memory; ``memcached``, ``redis``: the
run's servers of that kind, then weighed as caches and not as stores, in
front of a store that is not itself a cache; when every server is a tier,
the candidates are the embedded stores).
In front of the recommended store, a tier costs, round by round,
``hit_ratio × tier read + (1 − hit_ratio) × (tier miss + store read)``
(:func:`tiered`), the miss taken as a tier read (measured: a miss fetches and
decodes nothing, so that is its upper bound); that over the store's own read
is a paired ratio, judged by the same :data:`CLOSE` rule as the choice.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stratabench.engine.runner import Plan, Progress, ResultSink, execute
from stratabench.errors import StoreError, UsageError
from stratabench.layers.stores import open_store
from stratabench.options import EngineOptions, RunOptions
from stratabench.redact import redact
from stratabench.report.answer import Answer, Pick
from stratabench.report.charts import Chart, ChartPlan, Curve, CurveAxes, curve_chart
from stratabench.report.document import Report, Section
from stratabench.report.paired import PairedRatio, paired_ratio, ratio_of_rounds
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult
from stratabench.results.stats import level_label
from stratabench.suites.matrix.goals import Cost, Goal, Limit, Prices, cost_per_million
from stratabench.suites.matrix.suite import MatrixSuite, Records, default_layers, load
from stratabench.units import format_bytes, format_ns, format_ratio

__all__ = ["ADVISE_ENGINE", "CACHE_TIERS", "CLOSE", "DEFAULT_HIT_RATIO", "Advice", "TierChoice", "AdviseOptions",
           "Option", "advice_answer", "advice_chart", "advise", "advice_report", "candidates_table", "check_stores",
           "choose", "cost_ratio", "round_costs", "shortlist", "tier_choice", "tiered", "too_close"]

ADVISE_ENGINE = EngineOptions(min_samples=6, max_samples=20, target=0.05, cell_budget_ns=250_000_000,
                              min_sample_ns=10_000_000, warmups=1, memory_samples=1)
"""Sampling for advise's cells: six samples (a real 95% interval) of at least 10 ms each, a quarter second a cell."""

CLOSE = 1.05
"""Candidates within 5% of each other are too close to call even when their interval leaves out 1: two runs
shortlist from screens taken minutes apart, so the candidates differ between runs (msgpack and ormsgpack write
the same bytes, and either may be the one shortlisted), and a choice by a smaller margin flips between them."""

#: Embedded stores advise places records in when no server is named (a file per record is left out: it is
#: slower than SQLite at everything these records need, and its writes take most of a run's time).
EMBEDDED = ("sqlite", "lmdb")

#: Cache tiers advise can weigh in front of the recommended store (``--cache-tier``): the matrix's in-process
#: store, and the cache servers among the run's stores.
CACHE_TIERS = ("memory", "memcached", "redis")

DEFAULT_HIT_RATIO = 0.9
"""The share of reads a cache tier answers unless set (``--hit-ratio``): a hot set that fits the tier."""


@dataclass(frozen=True)
class AdviseOptions:
    """What to advise on.

    Attributes
    ----------
    data
        The user's records (JSON Lines or CSV).
    stores
        Server store URLs (the user's, and the local services'); empty: the embedded stores.
    goal, prices
        What to choose, and the prices of the cost.
    run_id
        Names the namespaces the cells and load runs write in.
    codecs, compressors
        Only these (empty: every one that can carry the records).
    shortlist, finalists
        Codec × compressor pairs placed on every store; candidates loaded.
    clients, load_seconds
        The load step's concurrent clients and measured seconds per finalist.
    workdir
        Where an embedded store's load run keeps its file (the run's scratch directory).
    tiers, hit_ratio
        Cache tiers to weigh in front of the recommended store (:data:`CACHE_TIERS`; empty: none), and the
        share of reads they answer.
    sample
        Records the screen and the placement use (the first ones): a read's time and a record's bytes do not
        need them all, and every cell stores and verifies each one; the load run uses every record.
    """

    data: str
    stores: tuple[str, ...] = ()
    goal: Goal = field(default_factory=Goal)
    prices: Prices = field(default_factory=Prices)
    run_id: str = "advise"
    codecs: tuple[str, ...] = ()
    compressors: tuple[str, ...] = ()
    shortlist: int = 3
    finalists: int = 2
    clients: int = 2
    load_seconds: float = 6.0
    workdir: Path | None = None
    sample: int = 2000
    tiers: tuple[str, ...] = ()
    hit_ratio: float = DEFAULT_HIT_RATIO

    def run_options(self, **changes: Any) -> RunOptions:
        values: dict[str, Any] = {"suites": ("matrix",), "data": self.data, "run_id": self.run_id, "size": self.sample,
                                  "engine": ADVISE_ENGINE, "codecs": self.codecs, "compressors": self.compressors,
                                  "stores": self.stores}
        values.update(changes)
        return RunOptions(**values)


@dataclass(frozen=True)
class Option:
    """One candidate: a codec × compressor on a store, with everything measured of it.

    Attributes
    ----------
    decode
        One record read from process memory (step 1): its decode time and the records' size.
    read, many
        One record and every record read from the store (step 2).
    load
        The load run (step 3), when it was a finalist.
    cost
        Its cost per million reads and its storage a month.
    cost_range
        The cost per million reads at the two ends of the CPU figures' intervals.
    """

    codec: str
    compression: str
    store: str
    url: str
    decode: CellResult
    read: CellResult
    many: CellResult | None
    cost: Cost
    cost_range: tuple[float, float]
    load: CellResult | None = None

    @property
    def name(self) -> str:
        return f"{self.codec}{'' if self.compression == 'none' else ' + ' + self.compression} on {self.store}"

    def _latency(self, key: str) -> float | None:
        if self.load is None or not self.load.ok:
            return None
        value = (self.load.notes.get("latency") or {}).get(key)
        decode = self.decode.median("wall_ns") or 0.0
        return None if value is None else float(value) + decode

    @property
    def p99_ns(self) -> float | None:
        """A read's p99 under load: the store's, plus the median decode of one record."""
        return self._latency("p99_ns")

    @property
    def p50_ns(self) -> float | None:
        return self._latency("p50_ns")

    @property
    def single_read_ns(self) -> float:
        """One read and decode with no other client: what picks the finalists."""
        return self.read.median("wall_ns") or math.inf

    @property
    def memory(self) -> float | None:
        """The client's peak memory reading every record."""
        return None if self.many is None or not self.many.ok else self.many.median("alloc_bytes")

    @property
    def stored(self) -> float:
        return self.cost.stored_bytes

    def value(self, measure: str) -> float | None:
        """The figure a goal's limit is about, or ``None`` when it was not measured."""
        return {"p50": self.p50_ns, "p99": self.p99_ns, "memory": self.memory, "stored": self.stored,
                "cost": self.cost.per_million}[measure]

    def gap(self, limit: Limit) -> float:
        """How far over the limit, as value ÷ bound (at most 1 meets it); infinite when not measured."""
        value = self.value(limit.measure)
        return math.inf if value is None else value / limit.bound

    def meets(self, goal: Goal) -> bool:
        return all(self.gap(limit) < 1 for limit in goal.limits)


@dataclass
class Advice:
    """What ``advise`` found: every candidate, the recommended one, the runner-up, how sure, and why."""

    goal: Goal
    prices: Prices
    records: int
    source: str
    options: list[Option]
    chosen: Option | None
    runner_up: Option | None
    sure: str
    closest: Option | None = None
    screened: list[CellResult] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    sampled: int = 0
    tiers: list[TierChoice] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        return self.chosen is None


@dataclass(frozen=True)
class TierChoice:
    """A cache tier weighed in front of the recommended store: its read, the store's, and the paired verdict.

    Attributes
    ----------
    tier, store
        The tier's single-read cell (same codec × compressor) and the recommended candidate.
    hit_ratio
        The share of reads the tier answers (an assumption, stated in the answer).
    ratio
        The tiered figure over the store's alone, round by round (below 1: the tier helps); ``None`` when no
        round measured both.
    what
        The figure compared: the goal's (cost per million reads, or one read's time).
    """

    tier: Option
    store: Option
    hit_ratio: float
    ratio: PairedRatio | None
    what: str

    @property
    def cost(self) -> float:
        """Dollars per million reads with the tier in front (:func:`tiered` of the two candidates' costs)."""
        tier = self.tier.cost.per_million
        return tiered(self.hit_ratio, tier=tier, miss=tier, store=self.store.cost.per_million)

    @property
    def sure(self) -> str:
        if self.ratio is None:
            return f"too close to call: the {self.what} of {self.tier.store} was not measured beside it"
        word = self.ratio.sureness(CLOSE)
        return word if word != "clear" or self.ratio.high < 1 / CLOSE or self.ratio.low > CLOSE else \
            "too close to call"

    @property
    def helps(self) -> bool:
        """Whether the tier is sure to make the goal's figure :data:`CLOSE` better."""
        return self.sure == "clear" and self.ratio is not None and self.ratio.high < 1

    @property
    def decision(self) -> str:
        if self.helps:
            return f"put {self.tier.store} in front of {self.store.store}"
        if self.sure == "clear":
            return f"no {self.tier.store} tier: {self.store.store} alone"
        return f"{self.tier.store} in front or not: {self.sure}"


def tiered(hit_ratio: float, *, tier: float, miss: float, store: float) -> float:
    """A read's figure with a cache tier in front: ``hit_ratio × tier + (1 − hit_ratio) × (miss + store)``."""
    return hit_ratio * tier + (1 - hit_ratio) * (miss + store)


def _round_figures(option: Option, goal: Goal) -> dict[int, float]:
    """What the goal chooses by, per round of ``option``'s single-read cell: its cost, or (fastest) its time."""
    if goal.objective != "fastest":
        return round_costs(option)
    wall = option.read.metrics.get("wall_ns")
    return {} if wall is None or wall.rounds is None else wall.per_round


def tier_choice(tier: Option, store: Option, hit_ratio: float, goal: Goal) -> TierChoice:
    """``tier`` in front of ``store``: the tiered figure over the store's, paired round by round (the miss
    taken as a tier read)."""
    tiers, stores = _round_figures(tier, goal), _round_figures(store, goal)
    rounds = {number: tiered(hit_ratio, tier=figure, miss=figure, store=stores[number])
              for number, figure in tiers.items() if number in stores}
    what = "one read's time" if goal.objective == "fastest" else "cost per million reads"
    return TierChoice(tier, store, hit_ratio, ratio_of_rounds(rounds, stores), what)


def _tier_choices(chosen: Option, tiers: Sequence[Option], options: AdviseOptions) -> list[TierChoice]:
    """Each asked-for tier with the chosen codec × compressor in front of the chosen store: memory always, a
    cache server only in front of a store that is not itself a cache server."""
    weighed = []
    for tier in sorted(tiers, key=lambda o: (CACHE_TIERS.index(o.read.params["kind"]), o.store)):
        kind = tier.read.params["kind"]
        if (tier.codec, tier.compression) != (chosen.codec, chosen.compression) or tier.store == chosen.store:
            continue
        if kind != "memory" and chosen.read.params.get("kind") in CACHE_TIERS:
            continue
        weighed.append(tier_choice(tier, chosen, options.hit_ratio, options.goal))
    return weighed


def _store_kind(url: str) -> str:
    """The store plugin that opens ``url`` (``redis``, ``memcached``, ``postgresql``...)."""
    from stratabench.layers.stores import store_for_scheme
    from stratabench.layers.stores.base import parse_store_url

    return store_for_scheme(parse_store_url(url).scheme)


def _check_tiers(options: AdviseOptions) -> None:
    """A cache server asked for as a tier must be among the stores: one line saying how to give it."""
    kinds = {_store_kind(url) for url in options.stores}
    missing = [tier for tier in options.tiers if tier != "memory" and tier not in kinds]
    if missing:
        raise UsageError(f"--cache-tier {','.join(missing)}: no such server among the stores; give its URL with "
                         "--store, or --services local")


def check_stores(urls: Sequence[str], options: RunOptions) -> None:
    """Open and close each store before anything is measured: an unreachable one stops advise in one line."""
    for url in urls:
        try:
            store = open_store(url, namespace=f"{options.run_id}.check", options=options)
        except StoreError as error:
            raise StoreError(f"--store {redact(url)}: {error.message}") from None
        store.close()


def _pairs(results: Sequence[CellResult]) -> list[tuple[str, str]]:
    """The codec × compressor pairs on the time-vs-size frontier of the screen, fastest first."""
    ok = [r for r in results if r.ok and r.median("wall_ns") is not None and r.median("size_bytes") is not None]
    ok.sort(key=lambda r: (r.median("wall_ns") or 0.0, r.median("size_bytes") or 0.0))
    frontier: list[CellResult] = []
    for result in ok:
        if not frontier or (result.median("size_bytes") or 0) < (frontier[-1].median("size_bytes") or 0):
            frontier.append(result)
    return [(str(r.params["codec"]), str(r.params["compression"])) for r in frontier]


def shortlist(screened: Sequence[CellResult], count: int) -> list[tuple[str, str]]:
    """At most ``count`` pairs of the frontier: its fastest, its smallest, and those evenly between."""
    frontier = _pairs(screened)
    if len(frontier) <= count:
        return frontier
    picks = sorted({round(i * (len(frontier) - 1) / (count - 1)) for i in range(count)})
    return [frontier[i] for i in picks]


def _cost(read: CellResult, records: int, prices: Prices, end: str = "median") -> Cost:
    """The cost of ``read``'s candidate; its bytes stored scaled from the records it held to all ``records``."""
    def figure(metric: str) -> float | None:
        summary = read.summary(metric)
        return None if summary is None else {"median": summary.median, "low": summary.ci_low,
                                             "high": summary.ci_high}[end]
    held = int(read.params.get("records") or records)
    value = (read.median("size_bytes") or 0.0) / max(held, 1)
    return cost_per_million(client_cpu_ns=figure("cpu_ns") or 0.0, server_cpu_ns=figure("server_cpu_ns"),
                            value_bytes=value, stored_bytes=value * records, prices=prices)


def _meeting(options: Sequence[Option], goal: Goal) -> list[Option]:
    """The candidates that meet every limit (and, to be the fastest, were loaded)."""
    return [o for o in options if o.meets(goal) and (goal.objective != "fastest" or o.p99_ns is not None)]


def too_close(advice: Advice) -> list[Option]:
    """The candidates meeting the goal that the recommended one is not sure to beat by :data:`CLOSE`."""
    chosen = advice.chosen
    if chosen is None:
        return []
    return [o for o in _meeting(advice.options, advice.goal) if o is not chosen
            and _sure(chosen, o, advice.goal) != "clear"]


def _shared(options: Sequence[Option]) -> list[str]:
    """What every one of ``options`` has in common: its store, codec or compressor."""
    parts = {"store": {o.store for o in options}, "codec": {o.codec for o in options},
             "compressor": {o.compression for o in options}}
    return [f"the {what} {values.pop()}" for what, values in parts.items() if len(values) == 1]


def choose(options: Sequence[Option], goal: Goal) -> tuple[Option | None, Option | None, str, Option | None]:
    """(recommended, runner-up, how sure, closest when refused) among ``options`` for ``goal``."""
    meeting = _meeting(options, goal)
    if not meeting:
        closest = min(options, key=lambda o: (max((o.gap(limit) for limit in goal.limits), default=math.inf),
                                              o.cost.per_million)) if options else None
        return None, None, "no candidate meets the goal", closest
    key: Callable[[Option], float] = ((lambda o: o.p99_ns or math.inf) if goal.objective == "fastest"
                                      else (lambda o: o.cost.per_million))
    ranked = sorted(meeting, key=lambda o: (key(o), o.name))
    chosen = ranked[0]
    borderline = _borderline(chosen, goal)
    if len(ranked) == 1:
        # The runner-up is then the closest of the rest: what the reader would fall back on.
        rest = [o for o in options if o is not chosen]
        runner = min(rest, key=lambda o: (max((o.gap(limit) for limit in goal.limits), default=0.0), key(o),
                                          o.name)) if rest else None
        return chosen, runner, borderline or "the only candidate that meets the goal", None
    # Sure only if no candidate meeting the goal is within the choice's noise, not just the runner-up.
    sure = next((word for word in (_sure(chosen, o, goal) for o in ranked[1:]) if word != "clear"), "clear")
    return chosen, ranked[1], borderline or sure, None


def _borderline(option: Option, goal: Goal) -> str | None:
    """Why meeting a latency limit is not sure: the p99's interval over the load's intervals reaches the bound."""
    summary = None if option.load is None else option.load.summary("latency_ns")
    for limit in goal.limits:
        if limit.measure == "p99" and summary is not None and summary.ci_high >= limit.bound - (
                option.decode.median("wall_ns") or 0.0):
            return f"too close to call: its p99 interval reaches the limit ({limit})"
    return None


def round_costs(option: Option) -> dict[int, float]:
    """``option``'s cost per million reads in each round of its single-read cell: each round's client (and
    server) CPU at the prices, its bytes on the wire being the same in every round."""
    client = option.read.metrics.get("cpu_ns")
    server = option.read.metrics.get("server_cpu_ns")
    if client is None or client.rounds is None:
        return {}
    servers = None if server is None or server.rounds is None else server.per_round
    costs = {}
    for number, cpu_ns in client.per_round.items():
        if servers is not None and number not in servers:
            continue
        costs[number] = cost_per_million(client_cpu_ns=cpu_ns, server_cpu_ns=None if servers is None else
                                         servers[number], value_bytes=option.cost.wire_bytes / 1e6,
                                         stored_bytes=option.stored, prices=option.cost.prices).per_million
    return costs


def cost_ratio(numerator: Option, denominator: Option) -> PairedRatio | None:
    """``numerator``'s cost per million reads over ``denominator``'s, paired round by round (the candidates'
    single-read cells share the placement's rounds); ``None`` when no round measured both."""
    return ratio_of_rounds(round_costs(numerator), round_costs(denominator))


def _margin(chosen: Option, other: Option, goal: Goal) -> PairedRatio | None:
    """``other`` over ``chosen`` on what the goal chooses by: the cost, or (fastest) the p99 under load."""
    if goal.objective == "fastest":
        return paired_ratio(other.load, chosen.load, "latency_ns")
    return cost_ratio(other, chosen)


def _sure(chosen: Option, other: Option, goal: Goal) -> str:
    """``clear`` when ``other`` is sure to be at least :data:`CLOSE` worse; else why not, naming it."""
    what = "p99 under load" if goal.objective == "fastest" else "cost per million reads"
    measured = _margin(chosen, other, goal)
    if measured is None:
        return f"too close to call: {other.name}'s {what} was not measured beside it"
    word = measured.sureness(CLOSE)
    if word == "clear" and measured.low > CLOSE:
        return word
    if word == "clear":
        # The medians ranked ``other`` behind; round by round it comes out ahead: neither order is sure.
        word = "too close to call"
    return (f"{word}: {other.name} has {measured} the {what} "
            f"({'an interval reaching' if measured.enough else 'too few rounds for'} a {format_ratio(CLOSE)} "
            "difference)")


def _changes(chosen: Option, runner: Option | None, goal: Goal, prices: Prices) -> list[str]:
    """What would make the runner-up the choice: a price, a limit."""
    if runner is None:
        return []
    misses = [limit for limit in goal.limits if runner.gap(limit) >= 1]
    if misses:
        return [f"{runner.name} would be chosen if it met " + " and ".join(
            f"{limit} (it has {_format(limit.measure, runner.value(limit.measure))})" for limit in misses)]
    lines = []
    a, b = chosen.cost, runner.cost
    cpu_a, cpu_b = a.client_cpu_s + (a.server_cpu_s or 0), b.client_cpu_s + (b.server_cpu_s or 0)
    if (cpu_b - cpu_a) * (b.wire_bytes - a.wire_bytes) < 0:
        if cpu_a > cpu_b:
            # The runner-up uses less CPU and more wire: dearer CPU makes it cheaper.
            price = prices.wire_gb * (b.wire_bytes - a.wire_bytes) / 1e9 * 3600 / (cpu_a - cpu_b)
            lines.append(f"if CPU cost more than ${price:.3g} per vCPU-hour (now ${prices.cpu_hour:g}), "
                         f"{runner.name} would be cheaper")
        else:
            price = prices.cpu_hour / 3600 * (cpu_b - cpu_a) / ((a.wire_bytes - b.wire_bytes) / 1e9)
            lines.append(f"if the wire cost more than ${price:.3g} per GB (now ${prices.wire_gb:g}), "
                         f"{runner.name} would be cheaper")
    if runner.stored * 1.1 < chosen.stored:
        lines.append(f"{runner.name} stores {format_ratio(chosen.stored / runner.stored)} less "
                     f"({format_bytes(runner.stored)}): it wins if storage is what you pay for most, "
                     f"or if your records grow")
    for limit in goal.limits:
        value = chosen.value(limit.measure)
        other = runner.value(limit.measure)
        if value is not None and other is not None and other < value:
            lines.append(f"a {limit.measure} limit below {_format(limit.measure, value)} would rule out "
                         f"{chosen.name}, and {runner.name} ({_format(limit.measure, other)}) would win")
    return lines


def _format(measure: str, value: float | None) -> str:
    if value is None:
        return "not measured"
    if measure in ("p50", "p99"):
        return format_ns(value)
    if measure == "cost":
        return f"${value:.4g}"
    return format_bytes(value)


def advise(options: AdviseOptions, sink: ResultSink, progress: Callable[[], Progress]) -> Advice:
    """Screen, place, load and choose (see the module docstring); every cell goes to ``sink`` as measured.

    ``progress`` makes a fresh progress display for each batch of cells (each counts its own).
    """
    run = options.run_options()
    records = load(options.data, None, None)  # a malformed or empty file stops here, in one line
    check_stores(options.stores, run)
    _check_tiers(options)
    codecs, compressors, _ = default_layers(records.schema)
    codecs = list(options.codecs or codecs)
    compressors = list(options.compressors or compressors)
    # Every codec uncompressed first, then every compressor on the codecs of that frontier only: a
    # compressor shrinks and slows each codec alike, so it need not be tried on the codecs already beaten.
    plain = "none" if "none" in compressors else compressors[0]
    screened = _screen(options, codecs, [plain], sink, progress)
    leaders = [codec for codec, _ in shortlist(screened, options.shortlist)]
    others = [c for c in compressors if c != plain]
    if leaders and others:
        screened += _screen(options, leaders, others, sink, progress)
    pairs = shortlist(screened, options.shortlist)
    if not pairs:
        raise UsageError(f"--data {options.data}: no codec and compressor could read these records back "
                         "intact; see the results file for each one's error")
    # Reading every record is what the memory limit is about; without one it would only cost time.
    reads = "get_one,get_many" if any(limit.measure == "memory" for limit in options.goal.limits) else "get_one"
    # The memory tier is placed with the stores, in the same rounds, so that a tier in front pairs up with them.
    embedded = (*EMBEDDED, "memory") if "memory" in options.tiers else EMBEDDED
    placed_options = options.run_options(codecs=tuple(sorted({c for c, _ in pairs})),
                                         compressors=tuple(sorted({c for _, c in pairs})),
                                         settings={"matrix.stores": ",".join(embedded), "matrix.operations": reads})
    failed = _probe(options, records, pairs[0], run)
    left_out = [f"{redact(url)}: {why}" for url, why in failed.items()]
    if options.stores and len(failed) == len(options.stores):
        raise StoreError("no store could take the records: " + "; ".join(left_out))
    # A server asked for as a cache tier is weighed as one, not as the store; with no other server, the
    # embedded stores are the candidates it may go in front of.
    servers = any(_store_kind(url) not in options.tiers for url in options.stores)
    placed_options = replace(placed_options, stores=tuple(url for url in options.stores if url not in failed))
    placed = _place(placed_options, sink, progress, lambda cell: (
        (cell.params["codec"], cell.params["compression"]) in pairs
        and (bool(cell.params["url"]) == servers or cell.params["kind"] in options.tiers)))
    everything = _candidates(screened, placed, records, options)
    # The in-process memory store keeps nothing past the process: a tier, never a candidate store.
    candidates = [o for o in everything if o.read.params["kind"] not in ("memory", *options.tiers)]
    tiers = [o for o in everything if o.read.params["kind"] in options.tiers]
    finalists = _finalists(candidates, options.goal, options.finalists)
    loaded = {id(o): _load(o, records, options, run, sink) for o in finalists}
    candidates = [_with_load(o, loaded.get(id(o))) for o in candidates]
    chosen, runner, sure, closest = choose(candidates, options.goal)
    advice = Advice(options.goal, options.prices, len(records.rows), records.source, candidates, chosen, runner,
                    sure, closest, screened, left_out=left_out, sampled=min(options.sample, len(records.rows)))
    if chosen is not None:
        advice.changes = _changes(chosen, runner, options.goal, options.prices)
        advice.tiers = _tier_choices(chosen, tiers, options)
        weighed = {w.tier.read.params["kind"] for w in advice.tiers}
        for tier in (t for t in options.tiers if t not in weighed):
            kind = chosen.read.params["kind"]
            why = (f"{chosen.store} is a cache itself" if tier != "memory" and kind in CACHE_TIERS else
                   f"its read of {chosen.codec} + {chosen.compression} failed (see the results file)")
            advice.left_out.append(f"cache tier {tier}: not weighed: {why}")
    return advice


def _screen(options: AdviseOptions, codecs: Sequence[str], compressors: Sequence[str], sink: ResultSink,
            progress: Callable[[], Progress]) -> list[CellResult]:
    """One record read from process memory, per codec × compressor. The cells run in this process: a worker
    apiece would cost more than the read it measures, and they share nothing a fresh process would not."""
    run = options.run_options(codecs=tuple(codecs), compressors=tuple(compressors), stores=(),
                              settings={"matrix.stores": "memory", "matrix.operations": "get_one"},
                              engine=replace(ADVISE_ENGINE, isolate=False))
    suite = MatrixSuite(run)
    return execute(Plan([(suite, suite.cells())]), run, sink, progress())


def _probe(options: AdviseOptions, records: Records, pair: tuple[str, str], run: RunOptions) -> dict[str, str]:
    """Each server store that cannot take the records, with why: the sample written twice (as a cell's later
    rounds write it again over the first) and one record read back, in a namespace of its own.

    A store that fails here (a server too slow to take the records, say) is left out of the placement, so its
    cells neither fail in turn, each after a timeout, nor hold up the others' rounds.
    """
    from stratabench.errors import StratabenchError
    from stratabench.layers.stores.base import batch_putter
    from stratabench.layers.value_pipeline import make_pipeline

    pipeline = make_pipeline(*pair, records.schema, run)
    items = [(f"r{index:09d}".encode(), pipeline.dumps([row]))
             for index, row in enumerate(records.rows[:options.sample])]
    failed: dict[str, str] = {}
    for url in options.stores:
        try:
            store = open_store(url, namespace=f"{options.run_id}.probe", options=run)
        except StratabenchError as error:
            failed[url] = error.message
            continue
        try:
            put_many = batch_putter(store)
            put_many(items)
            put_many(items)
            store.get(items[0][0])
            store.cleanup()
        except StratabenchError as error:
            failed[url] = error.message
        finally:
            store.close()
    return failed


def _place(options: RunOptions, sink: ResultSink, progress: Callable[[], Progress],
           keep: Callable[[Any], bool]) -> list[CellResult]:
    """The shortlist on every store, in one batch: the candidates share its rounds, so their figures pair up
    round by round (:func:`cost_ratio`)."""
    suite = MatrixSuite(options)
    return execute(Plan([(suite, [cell for cell in suite.cells() if keep(cell)])]), options, sink, progress())


def _candidates(screened: Sequence[CellResult], placed: Sequence[CellResult], records: Records,
                options: AdviseOptions) -> list[Option]:
    decode = {(r.params["codec"], r.params["compression"]): r for r in screened if r.ok}
    by: dict[tuple[str, str, str], dict[str, CellResult]] = {}
    for result in placed:
        p = result.params
        by.setdefault((p["codec"], p["compression"], p["store"]), {})[p["operation"]] = result
    urls = {redact(url): url for url in options.stores}
    found = []
    for (codec, compression, store), cells in by.items():
        read = cells.get("get_one")
        if read is None or not read.ok or (codec, compression) not in decode:
            continue
        cost = _cost(read, len(records.rows), options.prices)
        ends = sorted(_cost(read, len(records.rows), options.prices, end).per_million for end in ("low", "high"))
        if read.params["kind"] == "memory":
            cost = replace(cost, wire_bytes=0.0)  # the in-process tier sends nothing over a wire
        url = urls.get(str(read.params.get("url") or ""), "")
        found.append(Option(codec, compression, store, url, decode[codec, compression], read, cells.get("get_many"),
                            cost, (ends[0], ends[1])))
    return found


def _finalists(candidates: Sequence[Option], goal: Goal, count: int) -> list[Option]:
    """The best ``count`` for the goal on what is known before loading: single reads, cost, memory, size."""
    known = [limit for limit in goal.limits if limit.measure not in ("p50", "p99")]
    timed = [limit for limit in goal.limits if limit.measure in ("p50", "p99")]

    def rank(o: Option) -> tuple[float, ...]:
        over = max((o.gap(limit) for limit in known), default=0.0)
        slow = max((o.single_read_ns / limit.bound for limit in timed), default=0.0)
        objective = o.single_read_ns if goal.objective == "fastest" else o.cost.per_million
        return (max(over, 1.0), max(slow, 1.0), objective)

    return sorted(candidates, key=lambda o: (rank(o), o.name))[:count]


def _load(option: Option, records: Records, options: AdviseOptions, run: RunOptions,
          sink: ResultSink) -> CellResult | None:
    from stratabench.layers.value_pipeline import make_pipeline
    from stratabench.load.cells import load_cell
    from stratabench.load.run import LoadSpec, run_load

    url = option.url or _embedded_url(option.store, options)
    if url is None:
        return None
    pipeline = make_pipeline(option.codec, option.compression, records.schema, run)
    payloads = tuple(pipeline.dumps([row]) for row in records.rows)
    spec = LoadSpec(store_url=url, payloads=payloads, workload="get", run_id=options.run_id,
                    clients=min(options.clients, len(payloads)), warmup_s=1.0, duration_s=options.load_seconds,
                    options=run)
    # A load run's record, as ``stratabench load`` writes it: ``report`` shows it in the load table, by candidate.
    result = load_cell(run_load(spec), params={"codec": option.codec, "compression": option.compression},
                       notes={"subject": ["candidate", option.name]})
    sink.write(result)
    return result


def _embedded_url(store: str, options: AdviseOptions) -> str | None:
    """A fresh file of an embedded store for a load run, in the run's scratch directory; ``None`` without one."""
    from stratabench.layers.stores import STORES

    if store not in EMBEDDED or options.workdir is None:
        return None
    directory = options.workdir / f"advise-load-{store}"
    directory.mkdir(parents=True, exist_ok=True)
    return str(STORES.get(store).scratch_url(directory))


def _with_load(option: Option, load: CellResult | None) -> Option:
    return option if load is None else replace(option, load=load)


# -- the answer ----------------------------------------------------------------


def _evidence(option: Option) -> str:
    """``p99 3.05 ms (each second's p99: 2.10-4.90 ms, 96.87%), $0.0016 per million reads (0.00159-0.00162), ...``"""
    parts = []
    seconds = None if option.load is None else option.load.summary("latency_ns")
    if option.p99_ns is not None:
        spread = "" if seconds is None or seconds.n < 2 else (
            f" (each second's p99: {format_ns(seconds.ci_low)}-{format_ns(seconds.ci_high)}, "
            f"{level_label(seconds.ci_level)})")
        parts.append(f"p99 {format_ns(option.p99_ns)}{spread}")
    else:
        parts.append(f"one read {format_ns(option.single_read_ns)} (not loaded)")
    low, high = option.cost_range
    parts.append(f"${option.cost.per_million:.3g} per million reads ({low:.3g}-{high:.3g})")
    parts.append(f"{format_bytes(option.stored)} stored")
    return ", ".join(parts)


def _gap(option: Option, limit: Limit) -> str:
    """``p99<5.00 ms (has 7.00 ms: 2.00 ms over, 1.40× the limit)``, or why it has no figure."""
    value = option.value(limit.measure)
    if value is None:
        return f"{limit} (not measured: it was not among the candidates loaded)"
    return (f"{limit} (has {_format(limit.measure, value)}: {_format(limit.measure, value - limit.bound)} over, "
            f"{format_ratio(value / limit.bound)} the limit)")


def advice_answer(advice: Advice) -> Answer:
    """The recommendation as the report's answer: the choice, its evidence, the runner-up, what would change it."""
    found = Answer("advise", f"what to use for these {advice.records:,} records ({advice.source}) toward "
                   f"'{advice.goal}'")
    found.lines += [f"left out: {line}" for line in advice.left_out]
    if advice.chosen is None:
        closest = advice.closest
        gaps = [] if closest is None else [_gap(closest, limit) for limit in advice.goal.limits
                                           if closest.gap(limit) >= 1]
        found.picks.append(Pick(str(advice.goal), "refused: no candidate meets it",
                                "-" if closest is None else _evidence(closest),
                                "-" if closest is None else f"closest: {closest.name}",
                                "; ".join(gaps) or "no candidate was measured on it"))
        found.summary.append("No candidate meets the goal. " + (
            f"The closest is {closest.name}, which misses " + "; ".join(gaps) + "." if closest and gaps else
            "Measure with a server (--store URL or --services local) to load the candidates."))
        return found
    chosen, runner = advice.chosen, advice.runner_up
    fastest = advice.goal.objective == "fastest"
    compared = () if runner is None else ((runner.load, chosen.load),) if fastest else ((runner.read, chosen.read),)
    found.picks.append(Pick(f"recommended for '{advice.goal}'", chosen.name, _evidence(chosen),
                            "-" if runner is None else runner.name, advice.sure,
                            None if runner is None else _margin(chosen, runner, advice.goal),
                            tuple((a, b) for a, b in compared if a is not None and b is not None)))
    if runner is not None:
        misses = [_gap(runner, limit) for limit in advice.goal.limits if runner.gap(limit) >= 1]
        found.picks.append(Pick("runner-up", runner.name, _evidence(runner), chosen.name,
                                "misses " + "; ".join(misses) if misses else "meets the goal too"))
    verb = ("Use" if advice.sure in ("clear", "the only candidate that meets the goal")
            else f"Use ({advice.sure.split(':')[0]})")
    found.summary.append(f"{verb} {chosen.name}: " + _evidence(chosen) + "."
                         + ("" if runner is None else f" Runner-up: {runner.name} ({_evidence(runner)})."))
    tied = too_close(advice)
    if tied:
        shared = _shared([chosen, *tied])
        found.summary.append(f"Too close to call between {chosen.name} and " + ", ".join(o.name for o in tied) + (
            ": any of them will do" if not shared else f"; {'both' if len(tied) == 1 else 'all of them'} have "
            f"{' and '.join(shared)}: that much is sure") + ".")
    found.summary += [f"What would change the choice: {line}." for line in advice.changes]
    _tier_answer(found, advice)
    found.lines.append(f"Prices: {advice.prices.describe()} (defaults unless set with --price).")
    if advice.sampled < advice.records:
        found.lines.append(f"Single reads were measured on the first {advice.sampled:,} of the {advice.records:,} "
                           f"records, bytes stored scaled to all of them; the load run used every record.")
    found.lines.append("p50 and p99 are a read under load (the store's latency with the load's clients, plus the "
                       "median time to decode one record); cost per million reads counts client and server CPU "
                       "and the stored value's bytes on the wire (protocol overhead left out).")
    return found


def _tier_answer(found: Answer, advice: Advice) -> None:
    """Each cache tier weighed: a pick with its paired ratio, a sentence, and the hit ratio it assumes."""
    for weighed in advice.tiers:
        tier, store = weighed.tier, weighed.store
        measured = "-" if weighed.ratio is None else (
            f"{weighed.ratio} the {weighed.what} with {tier.store} in front (${weighed.cost:.3g} against "
            f"${store.cost.per_million:.3g} per million reads; a {tier.store} read "
            f"{format_ns(tier.single_read_ns)}, {store.store}'s {format_ns(store.single_read_ns)})")
        found.picks.append(Pick(f"cache tier in front of {store.name} at {weighed.hit_ratio:.0%} hits",
                                weighed.decision, measured, f"{store.store} alone", weighed.sure, weighed.ratio,
                                ((tier.read, store.read),)))
        found.summary.append(f"Cache tier: {weighed.decision}: {measured}.")
    if advice.tiers:
        hit = advice.tiers[0].hit_ratio
        found.lines.append(f"A cache tier assumes {hit:.0%} of reads hit it (--hit-ratio; default "
                           f"{DEFAULT_HIT_RATIO:.0%}): with it a read costs {hit:g} × a tier read + {1 - hit:.3g} × "
                           "(a miss + a store read), round by round of the placement, a miss counted as a tier "
                           "read (its upper bound: a miss fetches and decodes nothing); the tier's memory and "
                           "keeping it fresh are left out.")


def candidates_table(advice: Advice) -> Table:
    """Every candidate with its evidence: times with intervals, CPU, bytes, memory, cost."""
    table = Table(f"advise: every candidate ({advice.records:,} records)", [
        Column("name", "candidate"), Column("read", "one read", "right", format_ns, priority=1),
        Column("p50", "p50 loaded", "right", format_ns, priority=2), Column("p99", "p99 loaded", "right", format_ns),
        Column("client_cpu", "client CPU / M", "right", priority=3),
        Column("server_cpu", "server CPU / M", "right", priority=3),
        Column("wire", "wire / M", "right", format_bytes, priority=3),
        Column("stored", "stored", "right", format_bytes), Column("memory", "peak memory", "right", format_bytes),
        Column("cost", "$ / M reads", "right"), Column("month", "$ / month stored", "right", priority=4),
        Column("goal", "meets goal")])
    for option in sorted(advice.options, key=lambda o: o.cost.per_million):
        read = option.read.summary("wall_ns")
        table.rows.append({
            "name": option.name, "read": None if read is None else read.median,
            "p50": option.p50_ns, "p99": option.p99_ns,
            "client_cpu": f"{option.cost.client_cpu_s:.3g} s",
            "server_cpu": "-" if option.cost.server_cpu_s is None else f"{option.cost.server_cpu_s:.3g} s",
            "wire": option.cost.wire_bytes, "stored": option.stored, "memory": option.memory,
            "cost": f"${option.cost.per_million:.3g}",
            "month": f"${option.cost.stored_per_month:.3g}",
            "goal": "yes" if option.meets(advice.goal) else "no" if all(
                option.value(limit.measure) is not None for limit in advice.goal.limits) else "not loaded"})
    table.notes = ["/ M: per million reads. one read: a record read and decoded with no other client (its median). "
                   "server CPU is measured for a local server only; an embedded store's work is in the "
                   "client's. The results file keeps every cell's samples and intervals."]
    return table


def advice_report(advice: Advice, header: Mapping[str, Any]) -> Report:
    """advise's own page: its answer, the candidates on a time-vs-size chart with the winner marked, the table."""
    chart = advice_chart(advice)
    return Report(header, [Section("advise", advice_answer(advice), [candidates_table(advice)], [],
                                   ChartPlan(curves=lambda _: [chart] if chart is not None else []))])


def advice_chart(advice: Advice) -> Chart | None:
    """Each candidate's read time (p99 under load, else one read) against bytes stored; the winner marked."""
    if not advice.options:
        return None
    curves = []
    for option in advice.options:
        time = option.p99_ns if option.p99_ns is not None else option.single_read_ns
        label = option.name + ("" if option.p99_ns is not None else " (one read, not loaded)")
        curves.append(Curve(label, ((time, option.stored),), marked=0 if option is advice.chosen else None))
    chosen = "none meets the goal" if advice.chosen is None else f"recommended: {advice.chosen.name}"
    return curve_chart("advise-candidates", "advise: read time against bytes stored",
                       f"{len(curves)} candidates; {chosen} (the star). A finalist's time is its p99 under load, "
                       "the others' a single read.",
                       curves, CurveAxes("read time (p99 under load, else one read)", "bytes stored", format_ns,
                                         format_bytes), mark_label="recommended")
