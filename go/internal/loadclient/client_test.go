package loadclient

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// memoryStore is a map behind the Store contract, for the loop's own tests
// (the real stores are tested against real servers from Python).
type memoryStore struct {
	data     map[string][]byte
	failPuts bool
	lose     bool // keep the first value of every key: every update is lost
}

var testStore = &memoryStore{data: map[string][]byte{}}

func init() { RegisterStore(func(StoreConfig) (Store, error) { return testStore, nil }, "memtest") }

func (m *memoryStore) Get(key []byte) ([]byte, bool, error) {
	v, ok := m.data[string(key)]
	return v, ok, nil
}

func (m *memoryStore) Put(key, value []byte) error {
	if m.failPuts {
		return errors.New("down")
	}
	if _, ok := m.data[string(key)]; ok && m.lose {
		return nil
	}
	m.data[string(key)] = value
	return nil
}

func (m *memoryStore) PutMany(keys, values [][]byte) error {
	for i := range keys {
		m.data[string(keys[i])] = values[i]
	}
	return nil
}

func (m *memoryStore) Close() error { return nil }

func spec(keys, steps int, rate *float64) *Spec {
	s := &Spec{Index: 0, Clients: 1, RatePerS: rate, WarmupS: 0.01, DurationS: 0.2, Intervals: 4,
		MaxConsecutiveErrors: 5, Store: StoreConfig{URL: "memtest://"}, Prefix: "sb:t:"}
	for i := 0; i < keys; i++ {
		s.Payloads = append(s.Payloads, []byte{byte(i)})
	}
	for i := 0; i < steps; i++ {
		s.Reads = append(s.Reads, byte(i%2))
		s.Keys = binary.LittleEndian.AppendUint32(s.Keys, uint32(i/2%keys)) // each key updated, then read
	}
	return s
}

func decode(t *testing.T, text string) *hdrhistogram.Histogram {
	h, err := hdrhistogram.Decode([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestClosedLoopCountsEveryAnswerOnce(t *testing.T) {
	testStore.data, testStore.lose, testStore.failPuts = map[string][]byte{}, false, false
	r := Run(spec(10, 8, nil), func() bool { return true })
	if r.Fatal != nil || r.Ops == 0 || r.FailedChecks != 0 || r.Errors != 0 {
		t.Fatalf("report: %+v", r)
	}
	if got := decode(t, r.Histogram).TotalCount(); got != r.Ops {
		t.Fatalf("histogram holds %d, ops %d", got, r.Ops)
	}
	var sum int64
	for _, h := range r.IntervalHistograms {
		sum += decode(t, h).TotalCount()
	}
	if sum != r.Ops || len(r.IntervalHistograms) != 4 {
		t.Fatalf("intervals hold %d of %d", sum, r.Ops)
	}
	if r.Kinds["read"]+r.Kinds["update"] != int(r.Ops) {
		t.Fatalf("kinds %v, ops %d", r.Kinds, r.Ops)
	}
	if _, ok := testStore.data["sb:t:user000000000003"]; !ok {
		t.Fatalf("keys are not named as Python names them: %v", testStore.data)
	}
}

func TestOpenLoopKeepsItsSchedule(t *testing.T) {
	testStore.data, testStore.lose, testStore.failPuts = map[string][]byte{}, false, false
	rate := 1000.0
	r := Run(spec(10, 8, &rate), func() bool { return true })
	if r.Scheduled == nil || *r.Scheduled != 200 {
		t.Fatalf("scheduled %v, want 200 in 0.2 s at 1000/s", r.Scheduled)
	}
	if r.Ops < 190 || *r.Unsent > 10 {
		t.Fatalf("answered %d of 200, unsent %d", r.Ops, *r.Unsent)
	}
}

func TestLostUpdatesAreFailedChecks(t *testing.T) {
	testStore.data, testStore.lose, testStore.failPuts = map[string][]byte{}, true, false
	r := Run(spec(2, 8, nil), func() bool { return true })
	if r.FailedChecks == 0 || r.FirstFailedCheck == nil {
		t.Fatalf("no failed check: %+v", r)
	}
	if want := "key user000000000000: version 0, older than the 1 last written (a lost update)"; *r.FirstFailedCheck != want {
		t.Fatalf("first failed check %q, want %q", *r.FirstFailedCheck, want)
	}
}

func TestAServerThatFailsStopsTheClient(t *testing.T) {
	testStore.data, testStore.lose, testStore.failPuts = map[string][]byte{}, false, true
	s := spec(2, 8, nil)
	s.Reads = make([]byte, 8) // updates only: each fails
	r := Run(s, func() bool { return true })
	if r.Fatal == nil || r.Errors != 5 {
		t.Fatalf("fatal %v after %d errors, want 5", r.Fatal, r.Errors)
	}
}

func TestACalledOffRunMeasuresNothing(t *testing.T) {
	testStore.data, testStore.lose, testStore.failPuts = map[string][]byte{}, false, false
	r := Run(spec(2, 8, nil), func() bool { return false })
	if r.Fatal == nil || r.Ops != 0 || len(r.IntervalHistograms) != 4 {
		t.Fatalf("report: %+v", r)
	}
}

func TestAnUnknownSchemeIsOneLine(t *testing.T) {
	s := spec(2, 8, nil)
	s.Store.URL = "ftp://x"
	if r := Run(s, func() bool { return true }); r.Fatal == nil || *r.Fatal != "Go clients cannot load ftp:// stores; they load memtest, redis, rediss" {
		t.Fatalf("fatal %v", r.Fatal)
	}
}

func TestEachIntervalIsSpilledAsTheReportHasIt(t *testing.T) {
	rate := 2000.0
	for _, pace := range []*float64{nil, &rate} {
		testStore.data, testStore.lose, testStore.failPuts = map[string][]byte{}, false, false
		s := spec(10, 8, pace)
		s.Spill = filepath.Join(t.TempDir(), "client-0.jsonl")
		r := Run(s, func() bool { return true })
		data, err := os.ReadFile(s.Spill)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(lines) != len(r.IntervalHistograms) {
			t.Fatalf("%d lines for %d intervals", len(lines), len(r.IntervalHistograms))
		}
		for i, text := range lines {
			var line struct {
				Index, Interval int
				Histogram       string
				Kinds           map[string]int
			}
			if err := json.Unmarshal([]byte(text), &line); err != nil {
				t.Fatal(err)
			}
			if line.Interval != i || !decode(t, line.Histogram).Equals(decode(t, r.IntervalHistograms[i])) {
				t.Fatalf("line %d: interval %d, not the report's histogram", i, line.Interval)
			}
			if i == len(lines)-1 && line.Kinds["read"]+line.Kinds["update"] != int(r.Ops) {
				t.Fatalf("last line's kinds %v, ops %d", line.Kinds, r.Ops)
			}
		}
	}
}
