package loadclient

// The integrity stamp of src/stratabench/load/integrity.py, byte for byte:
//
//	"SBL1" | key number (8 bytes, big-endian) | version (8 bytes) | digest (8 bytes) | payload
//
// where the digest is the first 8 bytes of SHA-1 over the key number, the
// version and the payload. Python and Go clients write values the other can
// check, and a failed check is worded the same way by both.

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
)

var magic = []byte("SBL1")

const headerEnd = 4 + 8 + 8 + 8

// StampBytes is how many bytes a stamp adds in front of a payload.
const StampBytes = headerEnd

func digest(keyNumber, version uint64, payload []byte) []byte {
	h := sha1.New()
	var kv [16]byte
	binary.BigEndian.PutUint64(kv[:8], keyNumber)
	binary.BigEndian.PutUint64(kv[8:], version)
	h.Write(kv[:])
	h.Write(payload)
	return h.Sum(nil)[:8]
}

// Stamp is the value that version `version` of key `keyNumber` holds.
func Stamp(keyNumber, version uint64, payload []byte) []byte {
	out := make([]byte, 0, headerEnd+len(payload))
	out = append(out, magic...)
	out = binary.BigEndian.AppendUint64(out, keyNumber)
	out = binary.BigEndian.AppendUint64(out, version)
	out = append(out, digest(keyNumber, version, payload)...)
	return append(out, payload...)
}

// WhatIsWrong says why value (nil: missing) is not version `version` of key `keyNumber`, in one phrase.
func WhatIsWrong(value []byte, found bool, keyNumber, version uint64) string {
	if !found {
		return "the key is missing"
	}
	if len(value) < headerEnd || !bytes.HasPrefix(value, magic) {
		return fmt.Sprintf("a %d-byte value this run did not write", len(value))
	}
	number := binary.BigEndian.Uint64(value[4:12])
	foundVersion := binary.BigEndian.Uint64(value[12:20])
	if !bytes.Equal(value[20:28], digest(number, foundVersion, value[headerEnd:])) {
		return "the value does not match its hash (changed behind the clients' back)"
	}
	if number != keyNumber {
		return fmt.Sprintf("the value of key %d", number)
	}
	if foundVersion < version {
		return fmt.Sprintf("version %d, older than the %d last written (a lost update)", foundVersion, version)
	}
	return fmt.Sprintf("version %d, expected %d", foundVersion, version)
}

// CheckFailures counts a client's failed checks and keeps the first in words.
type CheckFailures struct {
	Count int
	First string
}

func (c *CheckFailures) add(key []byte, reason string) {
	c.Count++
	if c.First == "" {
		c.First = fmt.Sprintf("key %s: %s", key, reason)
	}
}

// Ledger is what each of a client's keys must hold: its version and exact bytes.
// After a put that failed, the server may or may not have applied it, so both
// the old and the new value are accepted until the next read settles it.
type Ledger struct {
	numbers  []uint64
	payloads [][]byte
	versions []uint64
	expected [][]byte
	either   map[int][]byte
}

// NewLedger holds version 0 of keys numbers[i] with payloads[i].
func NewLedger(numbers []uint64, payloads [][]byte) *Ledger {
	l := &Ledger{numbers: numbers, payloads: payloads, versions: make([]uint64, len(numbers)),
		expected: make([][]byte, len(numbers)), either: map[int][]byte{}}
	for i, n := range numbers {
		l.expected[i] = Stamp(n, 0, payloads[i])
	}
	return l
}

// NextValue is the value of key index's next version (accepted by Written).
func (l *Ledger) NextValue(index int) []byte {
	return Stamp(l.numbers[index], l.versions[index]+1, l.payloads[index])
}

// Written records that NextValue was put or, with certain false, may have been.
func (l *Ledger) Written(index int, value []byte, certain bool) {
	if !certain {
		l.either[index] = l.expected[index]
	}
	l.versions[index]++
	l.expected[index] = value
}

// Check returns "" when value is what key index must hold, else why not.
func (l *Ledger) Check(index int, value []byte, found bool) string {
	if found && bytes.Equal(value, l.expected[index]) {
		delete(l.either, index)
		return ""
	}
	previous, had := l.either[index]
	delete(l.either, index)
	if had && found && bytes.Equal(value, previous) {
		l.versions[index]--
		l.expected[index] = previous
		return ""
	}
	return WhatIsWrong(value, found, l.numbers[index], l.versions[index])
}
