"""Tests of the Go math/rand replica (stratabench.datasets.gorand).

Values marked "Go 1.26" were printed by a throwaway Go program using
``rand.New(rand.NewSource(seed))`` on linux/amd64; the others are the check
values of docs/studies/bulkload.md section 2.
"""

from __future__ import annotations

import hashlib
import math
import struct

import pytest

from stratabench.datasets import gorand
from stratabench.datasets.gorand import GoRand, cooked_table, ziggurat_tables

_M64 = (1 << 64) - 1


def test_cooked_table_matches_gos_check_values() -> None:
    cooked = cooked_table()
    assert len(cooked) == 607
    assert cooked[0] == -4181792142133755926
    assert cooked[606] == 4152330101494654406
    packed = struct.pack("<607Q", *(c & _M64 for c in cooked))
    assert hashlib.sha1(packed).hexdigest() == "0f60c704d36fcb6abbd0fbecc193857e3eac9778"


def test_ziggurat_tables_match_gos_normal_go() -> None:
    kn, wn, fn = ziggurat_tables()
    assert (len(kn), len(wn), len(fn)) == (128, 128, 128)
    assert kn[:3] == (0x76AD2212, 0x0, 0x600F1B53)
    assert kn[127] == 0x77D664E5
    # Go's float32 literals, rounded to binary32 as Go's compiler does.
    assert wn[:2] == (gorand._f32(1.7290405e-09), gorand._f32(1.2680929e-10))
    assert fn[127] == gorand._f32(0.0026696292)
    # SHA-1 of kn (uint32), wn and fn (float32), little-endian, which equals
    # the same digest of the literal tables in Go 1.26's math/rand/normal.go.
    packed = struct.pack("<128I", *kn) + struct.pack("<128f", *wn) + struct.pack("<128f", *fn)
    assert hashlib.sha1(packed).hexdigest() == "dceae2bf50099b792bb74dfd28e0b8320efec24c"


def test_first_int63_values() -> None:
    rand = GoRand(100)
    assert [rand.int63() for _ in range(3)] == [
        7530908113823513298,
        8856843482472596024,
        557474217132159819,
    ]
    assert GoRand(1).int63() == 5577006791947779410


class _ReferenceSource:
    """docs/studies/bulkload.md §2.2 read literally: one register, two indices, one step per call."""

    def __init__(self, seed: int) -> None:
        x = seed % (2**31 - 1) or 89482311
        for _ in range(20):
            x = x * 48271 % (2**31 - 1)
        self.vec = []
        for i in range(607):
            words = []
            for _ in range(3):
                x = x * 48271 % (2**31 - 1)
                words.append(x)
            a, b, c = words
            self.vec.append(((a << 40) ^ (b << 20) ^ c ^ cooked_table()[i]) & _M64)
        self.tap, self.feed = 0, 334

    def int63(self) -> int:
        self.tap = (self.tap - 1) % 607
        self.feed = (self.feed - 1) % 607
        self.vec[self.feed] = (self.vec[self.feed] + self.vec[self.tap]) & _M64
        return self.vec[self.feed] & ((1 << 63) - 1)


@pytest.mark.parametrize("seed", [100, 1, 0, -5, 2**40 + 3])
def test_buffered_stream_equals_the_literal_register(seed: int) -> None:
    # 20,000 draws cross several refills of the computed-ahead buffer.
    reference = _ReferenceSource(seed)
    rand = GoRand(seed)
    assert [rand.int63() for _ in range(20_000)] == [reference.int63() for _ in range(20_000)]


def test_seeds_reduce_modulo_2_31_minus_1_and_zero_is_special() -> None:
    first = GoRand(0).int63()
    assert GoRand(2**31 - 1).int63() == first
    assert GoRand(89482311).int63() == first
    assert GoRand(100 + (2**31 - 1)).int63() == GoRand(100).int63()


def test_draws_agree_with_go() -> None:
    # Go 1.26: r.Int63(), r.Uint32(), r.Int31(), r.Int31n(1000),
    # r.Int63n(1e12), r.Intn(100), r.Intn(1<<40), r.Float64(),
    # r.NormFloat64(), then Read of 5 bytes twice, then the sum of 100,000
    # NormFloat64 values and one more Int63.
    rand = GoRand(42)
    assert rand.int63() == 3440579354231278675
    assert rand.uint32() == 283469975
    assert rand.int31() == 1297281668
    assert rand.int31n(1000) == 750
    assert rand.int63n(10**12) == 945743547657
    assert rand.intn(100) == 45
    assert rand.intn(1 << 40) == 709660352415
    assert rand.float64() == 0.38444584994446157
    assert rand.norm_float64() == 1.565520076524086
    assert rand.read(5).hex() == "58083f61d3"
    assert rand.read(5).hex() == "75bc02b41d"
    total = 0.0
    for _ in range(100_000):
        total += rand.norm_float64()
    assert total == 360.7031825815241
    assert rand.int63() == 7380405891466858085


def test_read_keeps_its_reservoir_between_calls() -> None:
    whole = GoRand(7).read(20)
    rand = GoRand(7)
    assert rand.read(3) + rand.read(4) + rand.read(13) == whole
    # 7 bytes per Int63, low byte first; only the 7 low bytes are used.
    rand = GoRand(7)
    first = rand.int63()
    assert whole[:7] == (first & ((1 << 56) - 1)).to_bytes(7, "little")
    # Other draws do not touch the reservoir.
    rand = GoRand(7)
    head = rand.read(2)
    rand.int63()
    assert head + rand.read(5) == whole[:7]


def test_power_of_two_bounds_mask_instead_of_rejecting() -> None:
    a, b = GoRand(3), GoRand(3)
    assert a.intn(64) == b.int31() & 63
    assert a.int63n(2**31) == b.int63() & (2**31 - 1)


@pytest.mark.parametrize(
    ("method", "bound"),
    [("intn", 0), ("int31n", 0), ("int31n", 2**31), ("int63n", -1), ("int63n", 2**63)],
)
def test_bad_bounds_are_refused(method: str, bound: int) -> None:
    with pytest.raises(ValueError, match="needs"):
        getattr(GoRand(1), method)(bound)


def test_read_refuses_a_negative_count() -> None:
    with pytest.raises(ValueError, match="k >= 0"):
        GoRand(1).read(-1)


@pytest.mark.parametrize(
    ("x", "go_log", "libm_log"),
    # Go 1.26 math.Log on amd64, and where glibc's log differs by one ulp.
    [
        (0.6229016948897019, -0.4733665657597703, -0.47336656575977026),
        (0.29878889785386775, -1.2080179821906496, -1.2080179821906494),
        (0.3013591007694625, -1.1994526995108785, -1.1994526995108783),
    ],
)
def test_log_is_gos_not_the_platforms(x: float, go_log: float, libm_log: float) -> None:
    assert gorand._go_log(x) == go_log
    assert go_log != libm_log


def test_log_special_values() -> None:
    assert gorand._go_log(0.0) == -math.inf
    assert gorand._go_log(1.0) == 0.0
    assert gorand._go_log(0.5) == -0.6931471805599453
    assert math.isnan(gorand._go_log(-1.0))


@pytest.mark.parametrize(
    ("x", "go_f32"),
    # float32(math.Exp(x)) from Go 1.26 on an amd64 with FMA, for arguments
    # whose exp lies next to a binary32 midpoint: glibc's exp rounds these
    # the other way.
    [
        (-1.1212834786614714, float.fromhex("0x1.4dae94p-2")),
        (-1.489128046791914, float.fromhex("0x1.cdf74p-3")),
        (-0.3836662621752373, float.fromhex("0x1.5cdb0ep-1")),
    ],
)
def test_exp_near_binary32_midpoints_is_gos(x: float, go_f32: float) -> None:
    assert gorand._exp_f32(x) == go_f32
    assert gorand._f32(math.exp(x)) != go_f32


def test_fma_rounds_once() -> None:
    # 0.1 * 10 is exactly 1 + 2**-54 before rounding; a separate multiply
    # would round it to 1.0 and give 0.
    assert gorand._fma(0.1, 10.0, -1.0) == 2.0**-54
    assert 0.1 * 10.0 - 1.0 == 0.0


def _bulkload_by_methods(rand: GoRand, count: int) -> list[tuple[bool, int, float, str, int]]:
    """docs/studies/bulkload.md §2.6 through the public methods, one call per draw."""
    records = []
    for _ in range(count):
        text = rand.read(8 + rand.intn(64)).hex().upper()
        flag = rand.int63() & 1 == 0
        number = rand.int63()
        real = rand.norm_float64()
        seconds = rand.int63n(2**31)
        nanos = rand.int63n(10**9)
        records.append((flag, number, real, text, seconds * 10**9 + nanos))
    return records


@pytest.mark.parametrize("seed", [100, 42])
def test_bulkload_records_equal_the_method_by_method_draws(seed: int) -> None:
    # 20,000 records take about 550 wedge and 10 tail draws of NormFloat64.
    fast, slow = GoRand(seed), GoRand(seed)
    assert fast.bulkload_records(20_000) == _bulkload_by_methods(slow, 20_000)
    # The generator is left in the same state, reservoir included.
    assert fast.read(3) == slow.read(3)
    assert [fast.int63() for _ in range(10)] == [slow.int63() for _ in range(10)]
    assert fast.bulkload_records(5) == _bulkload_by_methods(slow, 5)


def test_bulkload_records_continue_after_other_draws() -> None:
    fast, slow = GoRand(9), GoRand(9)
    fast.read(5), slow.read(5)
    assert fast.bulkload_records(300) == _bulkload_by_methods(slow, 300)


def test_bulkload_records_build_with_make() -> None:
    records = GoRand(100).bulkload_records(2, make=list)
    assert records[0] == [
        True,
        1816137624592625432,
        -2.4122147266495095,
        "384203C438D4E94BF399CBD88BBCAF",
        965186882028350735,
    ]
    assert type(records[1]) is list


def test_repr_shows_the_seed() -> None:
    assert repr(GoRand(42)) == "GoRand(42)"
    assert GoRand(42).seed == 42
