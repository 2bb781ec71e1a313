"""An exact replica of Go's ``math/rand`` (version 1) generator, stdlib only.

``GoRand(seed)`` yields the same values as ``rand.New(rand.NewSource(seed))``
in Go, call for call: the additive lagged Fibonacci source (``rngSource``)
and the ``Rand`` methods built on it, including the ``NormFloat64`` ziggurat
and the byte reservoir of ``Read``. The bulkload dataset
(``docs/studies/bulkload.md`` section 2) is defined as this stream, so every
bit matters here.

Nothing is vendored from Go. The ``cooked`` seeding table is rebuilt by
polynomial jump-ahead (:func:`cooked_table`) and the ziggurat tables by
Marsaglia and Tsang's recurrence (:func:`ziggurat_tables`); tests pin both
against Go's published values.

``NormFloat64`` replays Go's own ``math.Log`` and, where it can matter,
``math.Exp`` as they run on amd64 (see ``_go_log`` and ``_exp_f32``),
because platform libraries round differently in the last bit: glibc's
``log`` gives a different seed-42 dataset from record 66,149 on. Go on
targets that fuse multiply-add in ``math.Log`` (arm64, for instance) may
itself differ from Go on amd64 in rare cases.

What it cannot do: Go's ``math/rand/v2``, the lock-protected global source
(whose seeding since Go 1.24 depends on ``GODEBUG=randseednop``), ``Perm``,
``Shuffle``, ``Float32``, ``ExpFloat64`` and ``Uint64`` are not replicated.
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Callable
from itertools import repeat
from operator import add, and_
from typing import TypeVar, overload

__all__ = [
    "BulkloadTuple",
    "GoRand",
    "cooked_table",
    "ziggurat_tables",
]

_T = TypeVar("_T")

#: One bulkload record as drawn: (bool, int, float, string, time in ns).
BulkloadTuple = tuple[bool, int, float, str, int]

_LEN = 607
_TAP = 273
# Go starts ``feed`` here; slot (_FEED0 - k) mod 607 receives output k.
_FEED0 = _LEN - _TAP
_M64 = (1 << 64) - 1
_M63 = (1 << 63) - 1
_M56 = (1 << 56) - 1
_INT32_MAX = (1 << 31) - 1

_LEHMER_A = 48271
_SEED_ZERO = 89482311
# gen_cooked.go runs its generator 7.8e12 steps from seed 1.
_COOK_STEPS = 7_800_000_000_000
# 18 bytes (144 bits) per packed coefficient: a product coefficient is a sum
# of at most 607 products of two 64-bit words, below 2**138.
_SLOT_BYTES = 18

# Outputs are produced in runs of 273: within such a run no output depends on
# another, so a run is one C-level map instead of 273 interpreted steps.
# Unreduced sums grow one bit per run; 16 runs stay below 2**90 (three
# CPython digits, the same as a 64-bit word).
_RUNS_PER_REFILL = 16

_ZIG_R = 3.442619855899
_ZIG_V = 9.91256303526217e-3
_ZIG_INV_R = 1.0 / _ZIG_R

# Int63n(1e9) rejects draws above this bound (probability about 1e-10).
_NS_LIMIT = _M63 - (1 << 63) % 1_000_000_000
# Most draws one bulkload record can take without entering a slow path:
# 1 (length) + 11 (Read of up to 71 bytes) + 2 + 1 (normal) + 2.
_RECORD_MARGIN = 20

_F32 = struct.Struct("<f")


def _f32(x: float) -> float:
    """Round a binary64 value to binary32 (round to nearest, ties to even)."""
    return _F32.unpack(_F32.pack(x))[0]  # type: ignore[no-any-return]


def _hex7(words: list[int]) -> str:
    """Uppercase hex of each word's 7 low bytes, lowest first, concatenated.

    Word t of ``words`` is characters 14t to 14t + 13: exactly what
    ``Read`` emits from that ``Int63``. Strided slices drop every eighth
    byte of the packed words in C rather than word by word.
    """
    n = len(words)
    packed = struct.pack(f"<{n}Q", *words)
    seven = bytearray(7 * n)
    for b in range(7):
        seven[b::7] = packed[b::8]
    return seven.hex().upper()


# -- Go's math.Log and math.Exp on amd64 ----------------------------------
#
# NormFloat64's tail returns r + x with x = -Log(Float64()) / r, so a
# one-ulp difference in the logarithm shows up in the data. Platform libms
# differ from Go in such ulps (glibc's log first does at seed 42, record
# 66,149), so Go's own algorithm is replayed: math/log_amd64.s, the same
# operations as math/log.go, each a correctly rounded binary64 operation in
# Python too.

_F64 = struct.Struct("<d")
_U64 = struct.Struct("<Q")
_LN2_HI = 6.93147180369123816490e-01  # 0x3fe62e42fee00000
_LN2_LO = 1.90821492927058770002e-10  # 0x3dea39ef35793c76
_LOG_L1 = 6.666666666666735130e-01  # 0x3FE5555555555593
_LOG_L2 = 3.999999999940941908e-01  # 0x3FD999999997FA04
_LOG_L3 = 2.857142874366239149e-01  # 0x3FD2492494229359
_LOG_L4 = 2.222219843214978396e-01  # 0x3FCC71C51D8E78AF
_LOG_L5 = 1.818357216161805012e-01  # 0x3FC7466496CB03DE
_LOG_L6 = 1.531383769920937332e-01  # 0x3FC39A09D078C69F
_LOG_L7 = 1.479819860511658591e-01  # 0x3FC2F112DF3E5244
_HALF_SQRT2 = 7.07106781186547524401e-01


def _go_log(x: float) -> float:
    """Go's ``math.Log`` on amd64, bit for bit (no fused multiply-add)."""
    if x <= 0.0 or x != x or x == math.inf:
        if x == 0.0:
            return -math.inf
        return x if x == math.inf else math.nan
    bits: int = _U64.unpack(_F64.pack(x))[0]
    # Frexp by bit surgery, as the assembly does it.
    f1: float = _F64.unpack(_U64.pack((bits & 0x000FFFFFFFFFFFFF) | 0x3FE0000000000000))[0]
    k = float(((bits >> 52) & 0x7FF) - 0x3FE)
    if f1 < _HALF_SQRT2:
        k -= 1.0
        f1 *= 2.0
    f = f1 - 1.0
    s = f / (2.0 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_LOG_L1 + s4 * (_LOG_L3 + s4 * (_LOG_L5 + s4 * _LOG_L7)))
    t2 = s4 * (_LOG_L2 + s4 * (_LOG_L4 + s4 * _LOG_L6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def _fma(a: float, b: float, c: float) -> float:
    """``a * b + c`` with one rounding (``math.fma`` arrives in Python 3.13).

    Finite arguments only. Exact in integers; ``int / int`` rounds
    correctly in CPython.
    """
    na, da = a.as_integer_ratio()
    nb, db = b.as_integer_ratio()
    nc, dc = c.as_integer_ratio()
    return (na * nb * dc + nc * da * db) / (da * db * dc)


_EXP_LOG2E = 1.4426950408889634073599246810018920
_EXP_LN2U = 0.69314718055966295651160180568695068359375
_EXP_LN2L = 0.28235290563031577122588448175013436025525412068e-12
_EXP_TAYLOR = (
    2.4801587301587301587e-5,
    1.9841269841269841270e-4,
    1.3888888888888888889e-3,
    8.3333333333333333333e-3,
    4.1666666666666666667e-2,
    1.6666666666666666667e-1,
    0.5,
    1.0,
)


def _go_exp_fma(x: float) -> float:
    """Go's ``math.Exp`` on amd64 with AVX and FMA (math/exp_amd64.s).

    Only for the arguments NormFloat64 passes: finite, in [-6, 0].
    """
    k = round(_EXP_LOG2E * x)  # CVTSD2SL rounds half to even, like round()
    fk = float(k)
    y = _fma(-fk, _EXP_LN2U, x)
    y = _fma(-fk, _EXP_LN2L, y)
    y *= 0.0625
    acc = _EXP_TAYLOR[0]
    for coefficient in _EXP_TAYLOR[1:]:
        acc = _fma(acc, y, coefficient)
    y *= acc
    for _ in range(3):
        y *= y + 2.0
    y = _fma(y, y + 2.0, 1.0)
    return math.ldexp(y, k)


def _exp_f32(x: float) -> float:
    """``float32(math.Exp(x))`` as Go computes it on amd64 with FMA.

    The platform ``exp`` and Go's differ by an ulp or so, which changes the
    binary32 rounding only when the binary64 value sits next to a binary32
    midpoint. Only then is Go's exponential replayed (it needs an emulated
    fused multiply-add, so it is slow). amd64 processors without FMA run
    another variant in Go; the two can only disagree in that same rare case.
    """
    e = math.exp(x)
    low = _U64.unpack(_F64.pack(e))[0] & 0x1FFFFFFF  # bits binary32 drops
    if abs(low - 0x10000000) <= 64:
        e = _go_exp_fma(x)
    return _f32(e)


def _seedrand(x: int) -> int:
    """Advance Go's auxiliary Lehmer generator (Schrage's method is exact)."""
    return (_LEHMER_A * x) % _INT32_MAX


def _seed_register(seed: int, shift_a: int, shift_b: int) -> list[int]:
    """Return the 607-word register Go's seeding builds, before any cooking.

    ``shift_a``/``shift_b`` are 40/20 for ``rngSource.Seed`` and 20/10 for
    ``gen_cooked.go``.
    """
    x = seed % _INT32_MAX  # Python's % is already non-negative
    if x == 0:
        x = _SEED_ZERO
    for _ in range(20):
        x = _seedrand(x)
    vec = []
    for _ in range(_LEN):
        x = _seedrand(x)
        u = x << shift_a
        x = _seedrand(x)
        u ^= x << shift_b
        x = _seedrand(x)
        u ^= x
        vec.append(u & _M64)
    return vec


def _history_from_register(vec: list[int]) -> list[int]:
    """Order a Go register (tap 0, feed 334) as outputs z_-606 ... z_0."""
    return [vec[(_FEED0 - 1 - m) % _LEN] for m in range(_LEN)]


def _pack(coeffs: list[int]) -> int:
    return int.from_bytes(
        b"".join(c.to_bytes(_SLOT_BYTES, "little") for c in coeffs), "little"
    )


def _unpack_low64(value: int, count: int) -> list[int]:
    """Coefficients of a packed product, each reduced modulo 2**64."""
    raw = value.to_bytes(count * _SLOT_BYTES, "little")
    return [
        int.from_bytes(raw[k * _SLOT_BYTES : k * _SLOT_BYTES + 8], "little")
        for k in range(count)
    ]


def _polymulmod(a: list[int], b: list[int]) -> list[int]:
    """Multiply modulo x**607 - x**334 - 1 with coefficients in Z/2**64."""
    c = _unpack_low64(_pack(a) * _pack(b), 2 * _LEN - 1)
    # x**k = x**(k-273) + x**(k-607); going down from the top, every term
    # folded onto a degree still >= 607 is folded again later.
    for k in range(2 * _LEN - 2, _LEN - 1, -1):
        ck = c[k]
        if ck:
            c[k - _TAP] += ck
            c[k - _LEN] += ck
    return [v & _M64 for v in c[:_LEN]]


def _polymulx(a: list[int]) -> list[int]:
    """Multiply by x: x**607 wraps to x**334 + 1."""
    top = a[-1]
    out = [top, *a[:-1]]
    out[_FEED0] = (out[_FEED0] + top) & _M64
    return out


def _xpow(n: int) -> list[int]:
    """Coefficients of x**n modulo x**607 - x**334 - 1 (n >= 1)."""
    poly = [0] * _LEN
    poly[1] = 1
    for bit in bin(n)[3:]:
        poly = _polymulmod(poly, poly)
        if bit == "1":
            poly = _polymulx(poly)
    return poly


@functools.cache
def cooked_table() -> tuple[int, ...]:
    """Return Go's ``rngCooked`` table, rebuilt rather than vendored.

    Go made the table by seeding a variant of its generator with 1 and running
    it 7.8e12 steps (``math/rand/gen_cooked.go``). The outputs obey
    z_k = z_(k-273) + z_(k-607) (mod 2**64), so x**N modulo the characteristic
    polynomial expresses z_(N+j) in terms of the starting outputs. Takes a
    fraction of a second once; the result is cached.

    Returns
    -------
    tuple of int
        607 words as Go writes them: signed 64-bit integers.
    """
    hist = _history_from_register(_seed_register(1, 20, 10))
    # Extend to w_0 ... w_1212 (w_m = z_(m-606)) so that one correlation
    # gives w_(N+j) = sum_i c_i w_(i+j) for all j at once.
    for m in range(_LEN, 2 * _LEN - 1):
        hist.append((hist[m - _LEN] + hist[m - _TAP]) & _M64)
    coeffs = _xpow(_COOK_STEPS)
    corr = _unpack_low64(_pack(coeffs[::-1]) * _pack(hist), 3 * _LEN - 2)
    # z_(N-606+j) = w_(N+j) is the coefficient of x**(606+j).
    vec = [0] * _LEN
    for j in range(_LEN):
        k = _COOK_STEPS - (_LEN - 1) + j
        vec[(_FEED0 - k) % _LEN] = corr[_LEN - 1 + j]
    return tuple(v - (1 << 64) if v >> 63 else v for v in vec)


@functools.cache
def ziggurat_tables() -> tuple[tuple[int, ...], tuple[float, ...], tuple[float, ...]]:
    """Return the ``NormFloat64`` tables ``(kn, wn, fn)`` of Go's ``normal.go``.

    Computed in binary64 as Marsaglia and Tsang describe, then ``kn`` is
    truncated to integers and ``wn``/``fn`` are rounded to binary32 (they are
    ``float32`` arrays in Go). The floats returned hold those binary32 values
    exactly.
    """
    m = 2.0**31
    r = _ZIG_R
    q = _ZIG_V / math.exp(-0.5 * r * r)
    kn = [0] * 128
    wn = [0.0] * 128
    fn = [0.0] * 128
    kn[0] = int((r / q) * m)
    kn[1] = 0
    wn[0] = q / m
    wn[127] = r / m
    fn[0] = 1.0
    fn[127] = math.exp(-0.5 * r * r)
    d = t = r
    for i in range(126, 0, -1):
        d = math.sqrt(-2.0 * math.log(_ZIG_V / d + math.exp(-0.5 * d * d)))
        kn[i + 1] = int((d / t) * m)
        t = d
        fn[i] = math.exp(-0.5 * d * d)
        wn[i] = d / m
    return tuple(kn), tuple(_f32(w) for w in wn), tuple(_f32(f) for f in fn)


class GoRand:
    """Go's ``rand.New(rand.NewSource(seed))``, value for value.

    Method names follow Go's in snake case. Go's register is kept as the
    history of the last 607 outputs, and outputs are computed ahead in runs
    (see ``_refill``); the values drawn are exactly Go's, only faster to get
    in Python.

    Parameters
    ----------
    seed
        Any integer; reduced modulo 2**31 - 1 like Go's ``Seed`` (0 and
        multiples of 2**31 - 1 act as 89,482,311).
    """

    __slots__ = ("_buf", "_hist", "_pending", "_pos", "_seed")

    def __init__(self, seed: int) -> None:
        self._seed = seed
        cooked = cooked_table()
        vec = [
            (u ^ c) & _M64 for u, c in zip(_seed_register(seed, 40, 20), cooked)
        ]
        self._hist = _history_from_register(vec)
        # Int63 values computed ahead; _pos is the next one to hand out.
        self._buf: list[int] = []
        self._pos = 0
        # Read's reservoir as the bytes it has left (Go keeps value + count).
        self._pending = b""

    def __repr__(self) -> str:
        return f"GoRand({self._seed})"

    @property
    def seed(self) -> int:
        """The seed this generator was created with."""
        return self._seed

    def _refill(self) -> None:
        """Append the next outputs to the buffer, dropping consumed ones."""
        z = self._hist
        for _ in range(_RUNS_PER_REFILL):
            # z_k = z_(k-607) + z_(k-273) for the next 273 k at once; the
            # sums are reduced modulo 2**64 only after the last run.
            z.extend(map(add, z[-_LEN:-_FEED0], z[-_TAP:]))
        self._hist = list(map(and_, z[-_LEN:], repeat(_M64)))
        tail = self._buf[self._pos :]
        tail.extend(map(and_, z[_LEN:], repeat(_M63)))
        self._buf = tail
        self._pos = 0

    # -- draws on Int63 ---------------------------------------------------

    def int63(self) -> int:
        """Return a non-negative 63-bit integer (Go's ``Int63``).

        Also Go's ``Int`` on 64-bit platforms, which is this same draw.
        """
        p = self._pos
        if p >= len(self._buf):
            self._refill()
            p = 0
        self._pos = p + 1
        return self._buf[p]

    def uint32(self) -> int:
        """Return a 32-bit unsigned integer: ``Int63 >> 31`` (Go's ``Uint32``)."""
        return self.int63() >> 31

    def int31(self) -> int:
        """Return a non-negative 31-bit integer: ``Int63 >> 32``."""
        return self.int63() >> 32

    def int31n(self, n: int) -> int:
        """Return an integer in [0, n) for 0 < n < 2**31 (Go's ``Int31n``).

        Raises
        ------
        ValueError
            If ``n`` is outside (0, 2**31).
        """
        if not 0 < n <= _INT32_MAX:
            raise ValueError(f"int31n needs 0 < n < 2**31, got {n}")
        if n & (n - 1) == 0:
            return self.int31() & (n - 1)
        limit = _INT32_MAX - (1 << 31) % n
        v = self.int31()
        while v > limit:
            v = self.int31()
        return v % n

    def int63n(self, n: int) -> int:
        """Return an integer in [0, n) for 0 < n < 2**63 (Go's ``Int63n``).

        Raises
        ------
        ValueError
            If ``n`` is outside (0, 2**63).
        """
        if not 0 < n <= _M63:
            raise ValueError(f"int63n needs 0 < n < 2**63, got {n}")
        if n & (n - 1) == 0:
            return self.int63() & (n - 1)
        limit = _M63 - (1 << 63) % n
        v = self.int63()
        while v > limit:
            v = self.int63()
        return v % n

    def intn(self, n: int) -> int:
        """Return an integer in [0, n) as Go's ``Intn`` does on 64 bits.

        ``Int31n`` for n < 2**31, ``Int63n`` above; the two consume the
        stream differently, so the split matters.
        """
        if n <= 0:
            raise ValueError(f"intn needs n > 0, got {n}")
        if n <= _INT32_MAX:
            return self.int31n(n)
        return self.int63n(n)

    def float64(self) -> float:
        """Return a float in [0, 1): ``Int63 / 2**63``, redrawn if it rounds to 1."""
        while True:
            f = self.int63() / 9223372036854775808.0
            if f != 1.0:
                return f

    def read(self, k: int) -> bytes:
        """Return ``k`` bytes as Go's ``Rand.Read`` does.

        Each ``Int63`` supplies its 7 low bytes, lowest first. Bytes left over
        stay in the generator and start the next ``read``; draws other than
        ``read`` never touch them.
        """
        if k < 0:
            raise ValueError(f"read needs k >= 0, got {k}")
        data = self._pending
        while len(data) < k:
            data += (self.int63() & _M56).to_bytes(7, "little")
        self._pending = data[k:]
        return data[:k]

    def norm_float64(self) -> float:
        """Return a standard normal value (Go's ``NormFloat64`` ziggurat)."""
        return self._norm_from(self.uint32())

    def _norm_from(self, u: int) -> float:
        """Finish ``NormFloat64`` whose first ``Uint32`` draw was ``u``."""
        kn, wn, fn = ziggurat_tables()
        while True:
            j = u - (1 << 32) if u >> 31 else u
            i = j & 0x7F
            x = j * wn[i]
            if abs(j) < kn[i]:
                return x
            if i == 0:
                while True:
                    x = -_go_log(self.float64()) * _ZIG_INV_R
                    y = -_go_log(self.float64())
                    if y + y >= x * x:
                        break
                return _ZIG_R + x if j > 0 else -_ZIG_R - x
            # Go computes this side in float32 with no fused multiply-add.
            f = _f32(self.float64())
            wedge = _f32(fn[i] + _f32(f * _f32(fn[i - 1] - fn[i])))
            if wedge < _exp_f32(-0.5 * x * x):
                return x
            u = self.uint32()

    # -- the bulkload record ----------------------------------------------

    @overload
    def bulkload_records(self, count: int) -> list[BulkloadTuple]: ...

    @overload
    def bulkload_records(
        self, count: int, make: Callable[[BulkloadTuple], _T]
    ) -> list[_T]: ...

    def bulkload_records(
        self, count: int, make: Callable[[BulkloadTuple], _T] | None = None
    ) -> list[_T] | list[BulkloadTuple]:
        """Draw ``count`` bulkload records (``docs/studies/bulkload.md`` section 2.6).

        Per record, in this order: ``L = 8 + Intn(64)``, ``B = Read(L)``,
        ``bool = Int() is even``, ``int = Int()``, ``float = NormFloat64()``,
        ``s = Int63n(2**31)``, ``ns = Int63n(1e9)``. The record is the tuple
        ``(bool, int, float, B as uppercase hex, s * 10**9 + ns)``.

        This lives here rather than in the dataset module because it runs the
        draws inline on the generator's buffer, several times faster than
        calling the methods, which matters for 100,000 records.

        Parameters
        ----------
        count
            Number of records to draw.
        make
            Called with each record tuple; its results are returned instead.
            A C-level callable such as ``functools.partial(tuple.__new__,
            SomeNamedTuple)`` keeps this fast.
        """
        kn, wn, _ = ziggurat_tables()
        ns_limit, margin = _NS_LIMIT, _RECORD_MARGIN
        records: list[BulkloadTuple] = []
        append = records.append
        # Read's reservoir as uppercase hex, so a record's string is sliced
        # out of one hex string rather than built byte by byte.
        pending = self._pending.hex().upper()
        buf = self._buf
        hex7 = _hex7(buf)
        p = self._pos
        lim = len(buf) - margin
        for _ in range(count):
            if p > lim:
                self._pos = p
                self._refill()
                buf = self._buf
                hex7 = _hex7(buf)
                p = 0
                lim = len(buf) - margin
            # Intn(64) is Int31n's power-of-two mask of Int31 = Int63 >> 32.
            width = 16 + ((buf[p] >> 31) & 126)
            p += 1
            need = width - len(pending)
            if need > 0:
                k = (need + 13) // 14
                data = pending + hex7[14 * p : 14 * (p + k)]
                p += k
            else:
                data = pending
            pending = data[width:]
            text = data[:width]
            flag = not (buf[p] & 1)
            number = buf[p + 1]
            u = buf[p + 2] >> 31
            p += 3
            j = u - 4294967296 if u >> 31 else u
            i = j & 127
            if (j if j >= 0 else -j) < kn[i]:
                real = j * wn[i]
            else:
                self._pos = p
                real = self._norm_from(u)
                if len(self._buf) - self._pos < 2:
                    self._refill()
                if self._buf is not buf:
                    buf = self._buf
                    hex7 = _hex7(buf)
                    lim = len(buf) - margin
                p = self._pos
            seconds = buf[p] & 0x7FFFFFFF
            v = buf[p + 1]
            p += 2
            if v > ns_limit:
                self._pos = p
                while v > ns_limit:
                    v = self.int63()
                if self._buf is not buf:
                    buf = self._buf
                    hex7 = _hex7(buf)
                    lim = len(buf) - margin
                p = self._pos
            append((flag, number, real, text, seconds * 1_000_000_000 + v % 1_000_000_000))
        self._pos = p
        self._pending = bytes.fromhex(pending)
        if make is None:
            return records
        return list(map(make, records))
