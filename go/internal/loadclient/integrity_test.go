package loadclient

import (
	"encoding/hex"
	"strings"
	"testing"
)

// The value Python's stratabench.load.integrity.stamp(7, 3, b"hello") gives.
const pythonStamp = "53424c310000000000000007000000000000000316a0f99e9bcd177768656c6c6f"

func TestStampMatchesPython(t *testing.T) {
	if got := hex.EncodeToString(Stamp(7, 3, []byte("hello"))); got != pythonStamp {
		t.Fatalf("stamp = %s, want %s", got, pythonStamp)
	}
}

func TestWhatIsWrong(t *testing.T) {
	v1 := Stamp(7, 1, []byte("x"))
	tampered := append([]byte{}, Stamp(7, 2, []byte("x"))...)
	tampered[len(tampered)-1] = 'y'
	cases := []struct {
		value []byte
		found bool
		want  string
	}{
		{nil, false, "the key is missing"},
		{[]byte("abc"), true, "a 3-byte value this run did not write"},
		{tampered, true, "does not match its hash"},
		{Stamp(8, 2, []byte("x")), true, "the value of key 8"},
		{v1, true, "version 1, older than the 2 last written (a lost update)"},
		{Stamp(7, 5, []byte("x")), true, "version 5, expected 2"},
	}
	for _, c := range cases {
		if got := WhatIsWrong(c.value, c.found, 7, 2); !strings.Contains(got, c.want) {
			t.Errorf("WhatIsWrong = %q, want %q", got, c.want)
		}
	}
}

func TestLedgerAcceptsEitherValueAfterAFailedPut(t *testing.T) {
	l := NewLedger([]uint64{5}, [][]byte{[]byte("p")})
	old := l.expected[0]
	next := l.NextValue(0)
	l.Written(0, next, false)
	if reason := l.Check(0, old, true); reason != "" {
		t.Fatalf("the old value after a failed put: %s", reason)
	}
	if reason := l.Check(0, next, true); !strings.Contains(reason, "expected 0") {
		t.Fatalf("once settled on the old value, the new one is wrong: %q", reason)
	}
}

func TestLedgerCatchesALostUpdate(t *testing.T) {
	l := NewLedger([]uint64{5}, [][]byte{[]byte("p")})
	old := l.expected[0]
	l.Written(0, l.NextValue(0), true)
	if reason := l.Check(0, old, true); !strings.Contains(reason, "lost update") {
		t.Fatalf("reason = %q", reason)
	}
}
