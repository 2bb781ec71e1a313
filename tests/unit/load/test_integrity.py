from __future__ import annotations

from stratabench.load.integrity import STAMP_BYTES, CheckFailures, KeyLedger, stamp, what_is_wrong


def ledger() -> KeyLedger:
    return KeyLedger([10, 11], [b"alpha", b"beta"])


def test_a_value_as_written_passes_and_its_stamp_has_the_documented_size() -> None:
    keys = ledger()
    assert keys.check(0, stamp(10, 0, b"alpha")) is None
    assert len(stamp(10, 0, b"alpha")) == STAMP_BYTES + len(b"alpha")


def test_an_update_moves_the_expected_version() -> None:
    keys = ledger()
    value = keys.next_value(1)
    keys.written(1, value, certain=True)
    assert keys.check(1, value) is None
    assert keys.check(1, stamp(11, 0, b"beta")) == "version 0, older than the 1 last written (a lost update)"


def test_every_kind_of_wrong_value_is_named() -> None:
    keys = ledger()
    tampered = bytearray(stamp(10, 0, b"alpha"))
    tampered[-1] ^= 1
    assert keys.check(0, bytes(tampered)) == "the value does not match its hash (changed behind the clients' back)"
    assert keys.check(0, None) == "the key is missing"
    assert keys.check(0, b"hello") == "a 5-byte value this run did not write"
    assert keys.check(0, stamp(11, 0, b"beta")) == "the value of key 11"
    assert what_is_wrong(stamp(10, 3, b"alpha"), 10, 1) == "version 3, expected 1"


def test_after_a_failed_put_either_version_is_accepted_once() -> None:
    keys = ledger()
    old = keys.expected[0]
    keys.written(0, keys.next_value(0), certain=False)
    assert keys.check(0, old) is None  # the put did not happen: the ledger goes back to version 0
    assert keys.versions[0] == 0
    assert keys.check(0, stamp(10, 1, b"alpha")) is not None


def test_failures_count_and_keep_the_first() -> None:
    failures = CheckFailures()
    failures.add(b"user1", "the key is missing")
    failures.add(b"user2", "a 5-byte value this run did not write")
    assert (failures.count, failures.first) == (2, "key user1: the key is missing")
