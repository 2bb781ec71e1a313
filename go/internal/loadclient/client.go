// Package loadclient is one load client of stratabench's load engine, in Go:
// the life of src/stratabench/load/client.py (prepare, wait at the start
// gate, closed or open loop, report) for the store requests of
// src/stratabench/load/store_requests.py, with latencies recorded in
// HdrHistogram's Go port and reported in its V2 compressed encoding, the
// form Python's hdrhistogram decodes and merges.
//
// The Python side draws each client's request plan (which step reads or
// updates which key) and sends it in the Spec, so Go and Python clients
// given the same seed send the very same requests.
package loadclient

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HighestNs is the longest latency a histogram holds (one hour), as in Python's load/histogram.py.
const HighestNs = 3_600_000_000_000

const (
	significantDigits = 3
	spinNs            = 300_000 // sleeping overshoots; a paced client spins the last stretch
	loadBatch         = 500
	nsPerS            = 1e9
)

// Spec is one client's work, as Python's ClientSpec and StoreRequestPlan give it.
type Spec struct {
	Index                int         `json:"index"`
	Clients              int         `json:"clients"`
	RatePerS             *float64    `json:"rate_per_s"`
	Phase                float64     `json:"phase"`
	WarmupS              float64     `json:"warmup_s"`
	DurationS            float64     `json:"duration_s"`
	Intervals            int         `json:"intervals"`
	MaxConsecutiveErrors int         `json:"max_consecutive_errors"`
	Store                StoreConfig `json:"store"`
	// Prefix goes in front of every key: the run's namespace in the store.
	Prefix   string   `json:"prefix"`
	FirstKey uint64   `json:"first_key"`
	Payloads [][]byte `json:"payloads"`
	// Reads holds one byte per step of the plan (1: read, 0: update), Keys one
	// little-endian uint32 per step: the index of the key, among the client's own.
	Reads []byte `json:"reads"`
	Keys  []byte `json:"keys"`
	// Spill is the file each finished interval is appended to (spill.go); empty for none.
	Spill string `json:"spill"`
}

// Check refuses a spec this client cannot run.
func (s *Spec) Check() error {
	steps := len(s.Reads)
	switch {
	case len(s.Payloads) == 0:
		return fmt.Errorf("the client owns no key")
	case steps == 0 || steps&(steps-1) != 0:
		return fmt.Errorf("the plan has %d steps, not a power of two", steps)
	case len(s.Keys) != 4*steps:
		return fmt.Errorf("the plan has %d reads but %d key bytes", steps, len(s.Keys))
	case s.Intervals < 1:
		return fmt.Errorf("intervals must be at least 1")
	case s.DurationS <= 0 || s.WarmupS < 0:
		return fmt.Errorf("durations must be positive")
	case s.RatePerS != nil && !(*s.RatePerS > 0):
		return fmt.Errorf("the rate must be positive")
	}
	for i := 0; i < steps; i++ {
		if int(binary.LittleEndian.Uint32(s.Keys[4*i:])) >= len(s.Payloads) {
			return fmt.Errorf("step %d names key %d of %d", i, binary.LittleEndian.Uint32(s.Keys[4*i:]), len(s.Payloads))
		}
	}
	return nil
}

// Report mirrors Python's ClientReport field for field (see its docstring).
type Report struct {
	Index              int            `json:"index"`
	Host               string         `json:"host"`
	Pid                int            `json:"pid"`
	HostCPUs           int            `json:"host_cpus"`
	Ops                int64          `json:"ops"`
	Kinds              map[string]int `json:"kinds"`
	Errors             int64          `json:"errors"`
	FirstError         *string        `json:"first_error"`
	FailedChecks       int            `json:"failed_checks"`
	FirstFailedCheck   *string        `json:"first_failed_check"`
	Histogram          string         `json:"histogram"`
	IntervalHistograms []string       `json:"interval_histograms"`
	WindowS            float64        `json:"window_s"`
	BusyCPUS           float64        `json:"busy_cpu_s"`
	WallS              float64        `json:"wall_s"`
	HostBusy           float64        `json:"host_busy"`
	Scheduled          *int64         `json:"scheduled"`
	Unsent             *int64         `json:"unsent"`
	FinalLagNs         *int64         `json:"final_lag_ns"`
	Fatal              *string        `json:"fatal"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// NewHistogram is the one shape every load histogram has: 1 ns to one hour, 3 significant digits.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, HighestNs, significantDigits)
}

// Encode is the V2 compressed, base64 encoding Python's load/histogram.py decodes.
func Encode(h *hdrhistogram.Histogram) string {
	data, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		panic("loadclient: encode histogram: " + err.Error()) // only a broken compressor fails
	}
	return string(data)
}

// NotRun is the report of a client that never measured, with why.
func NotRun(spec *Spec, why string) Report {
	intervals := spec.Intervals
	if intervals < 1 {
		intervals = 1
	}
	empty := Encode(NewHistogram())
	each := make([]string, intervals)
	for i := range each {
		each[i] = empty
	}
	host, _ := os.Hostname()
	return Report{Index: spec.Index, Host: host, Pid: os.Getpid(), HostCPUs: runtime.NumCPU(), Kinds: map[string]int{},
		Histogram: empty, IntervalHistograms: each, Fatal: &why}
}

// Requests is one client's requests to its store, every read checked.
type Requests struct {
	store    Store
	ledger   *Ledger
	keys     [][]byte
	reads    []byte
	plan     []int
	step     int
	prefix   int // bytes of the run's prefix in front of each key
	Failures CheckFailures
}

// NewRequests opens nothing: store is already open.
func NewRequests(spec *Spec, store Store) *Requests {
	numbers := make([]uint64, len(spec.Payloads))
	keys := make([][]byte, len(spec.Payloads))
	for i := range numbers {
		numbers[i] = spec.FirstKey + uint64(i)
		keys[i] = []byte(fmt.Sprintf("%suser%012d", spec.Prefix, numbers[i]))
	}
	plan := make([]int, len(spec.Reads))
	for i := range plan {
		plan[i] = int(binary.LittleEndian.Uint32(spec.Keys[4*i:]))
	}
	return &Requests{store: store, ledger: NewLedger(numbers, spec.Payloads), keys: keys, reads: spec.Reads, plan: plan,
		prefix: len(spec.Prefix)}
}

// Prepare puts version 0 of every key the client owns (untimed).
func (r *Requests) Prepare() error {
	for start := 0; start < len(r.keys); start += loadBatch {
		end := min(start+loadBatch, len(r.keys))
		if err := r.store.PutMany(r.keys[start:end], r.ledger.expected[start:end]); err != nil {
			return err
		}
	}
	return nil
}

// Send sends the plan's next request and checks its answer; returns its kind.
func (r *Requests) Send() (string, error) {
	step := r.step & (len(r.reads) - 1)
	r.step++
	index := r.plan[step]
	key := r.keys[index]
	if r.reads[step] != 0 {
		value, found, err := r.store.Get(key)
		if err != nil {
			return "", err
		}
		if reason := r.ledger.Check(index, value, found); reason != "" {
			r.Failures.add(key[r.prefix:], reason) // named without the run's prefix, as Python names it
		}
		return "read", nil
	}
	value := r.ledger.NextValue(index)
	if err := r.store.Put(key, value); err != nil {
		r.ledger.Written(index, value, false)
		return "", err
	}
	r.ledger.Written(index, value, true)
	return "update", nil
}

// run is the mutable state of one client's measurement.
type run struct {
	spec                *Spec
	requests            *Requests
	base                time.Time
	intervals           []*hdrhistogram.Histogram
	windowNs            int64
	ops                 int64
	kinds               map[string]int
	errors, consecutive int64
	firstError, fatal   string
	spunNs              int64
	// What a spilled interval's counts are taken from, and where in the window the next one to spill ends.
	started, cpuStart int64
	hostStart         hostTimes
	spill             *spill
	spillAt           int64
}

func (r *run) now() int64 { return int64(time.Since(r.base)) }

func (r *run) request() (string, bool) {
	kind, err := r.requests.Send()
	if err != nil {
		r.errors++
		r.consecutive++
		msg := strings.Join(strings.Fields(err.Error()), " ")
		if r.firstError == "" {
			r.firstError = msg
		}
		if r.consecutive >= int64(r.spec.MaxConsecutiveErrors) {
			r.fatal = msg
		}
		return "", false
	}
	r.consecutive = 0
	return kind, true
}

func (r *run) answered(kind string, latency, offset int64) {
	slot := int(offset * int64(len(r.intervals)) / max(r.windowNs, 1))
	slot = min(max(slot, 0), len(r.intervals)-1)
	r.intervals[slot].RecordValue(min(max(latency, 0), HighestNs))
	r.ops++
	r.kinds[kind]++
}

func (r *run) closedLoop(windowStart, deadline int64) int64 {
	for r.fatal == "" {
		sent := r.now()
		for sent-windowStart >= r.spillAt {
			r.spillUntil(sent - windowStart)
			sent = r.now() // the spill's time is not the request's (and may end another interval)
		}
		if sent >= deadline {
			return sent
		}
		if kind, ok := r.request(); ok && sent >= windowStart {
			r.answered(kind, r.now()-sent, sent-windowStart)
		}
	}
	return r.now()
}

// openLoop sends request k when it is due; latency runs from the due time (no coordinated omission).
func (r *run) openLoop(start, windowStart, deadline int64, rate float64) (stopped, scheduled, unsent, lag int64) {
	interval := nsPerS / rate
	phase := r.spec.Phase
	var k int64
	for r.fatal == "" {
		due := start + int64((float64(k)+phase)*interval)
		if due-windowStart >= r.spillAt {
			r.spillUntil(due - windowStart) // while it would wait anyway, when it is on time
		}
		now := r.now()
		if due >= deadline || now >= deadline {
			break
		}
		if now < due {
			r.waitUntil(due)
		}
		lag = max(0, now-due)
		if kind, ok := r.request(); ok && due >= windowStart {
			r.answered(kind, r.now()-due, due-windowStart)
		}
		k++
	}
	stopped = r.now()
	dueBefore := func(moment int64) int64 {
		return max(0, int64(math.Ceil(float64(moment-start)/interval-phase)))
	}
	return stopped, dueBefore(deadline) - dueBefore(windowStart), max(0, dueBefore(deadline)-k), lag
}

func (r *run) waitUntil(due int64) {
	if remaining := due - r.now(); remaining > spinNs {
		time.Sleep(time.Duration(remaining - spinNs))
	}
	spinStart := r.now()
	for r.now() < due {
	}
	r.spunNs += r.now() - spinStart
}

// Gate is where a prepared client waits for the others: true to start, false when the run was called off.
type Gate func() bool

// Run is one client's whole life; a failure becomes the report's Fatal.
func Run(spec *Spec, gate Gate) Report {
	if err := spec.Check(); err != nil {
		return NotRun(spec, "bad client spec: "+err.Error())
	}
	store, err := OpenStore(spec.Store)
	if err != nil {
		return NotRun(spec, err.Error())
	}
	defer store.Close()
	requests := NewRequests(spec, store)
	if err := requests.Prepare(); err != nil {
		return NotRun(spec, strings.Join(strings.Fields(err.Error()), " "))
	}
	if !gate() {
		return NotRun(spec, "the run was called off before it started")
	}
	return measure(spec, requests)
}

func measure(spec *Spec, requests *Requests) Report {
	r := &run{spec: spec, requests: requests, base: time.Now(), kinds: map[string]int{},
		windowNs: int64(spec.DurationS * nsPerS)}
	for i := 0; i < spec.Intervals; i++ {
		r.intervals = append(r.intervals, NewHistogram())
	}
	hostStart := readHostTimes()
	cpuStart := processCPUNs()
	started := r.now()
	r.started, r.cpuStart, r.hostStart = started, cpuStart, hostStart
	r.spill, r.spillAt = openSpill(spec.Spill), 1<<63-1
	if r.spill != nil {
		r.spillAt = r.endOf(0)
	}
	windowStart := started + int64(spec.WarmupS*nsPerS)
	deadline := windowStart + r.windowNs
	var stopped int64
	var scheduled, unsent, lag *int64
	if spec.RatePerS == nil {
		stopped = r.closedLoop(windowStart, deadline)
	} else {
		var s, u, l int64
		stopped, s, u, l = r.openLoop(started, windowStart, deadline, *spec.RatePerS)
		scheduled, unsent, lag = &s, &u, &l
	}
	r.spillUntil(min(stopped, deadline) - windowStart) // the last interval, when the window is whole
	r.spill.close()
	busyNs := processCPUNs() - cpuStart - r.spunNs
	hostBusy := busyShare(hostStart, readHostTimes())
	total := NewHistogram()
	each := make([]string, len(r.intervals))
	for i, h := range r.intervals {
		total.Merge(h)
		each[i] = Encode(h)
	}
	host, _ := os.Hostname()
	return Report{
		Index: spec.Index, Host: host, Pid: os.Getpid(), HostCPUs: runtime.NumCPU(),
		Ops: r.ops, Kinds: r.kinds, Errors: r.errors, FirstError: optional(r.firstError),
		FailedChecks: requests.Failures.Count, FirstFailedCheck: optional(requests.Failures.First),
		Histogram: Encode(total), IntervalHistograms: each,
		WindowS:  float64(max(0, min(stopped, deadline)-windowStart)) / nsPerS,
		BusyCPUS: float64(max(0, busyNs)) / nsPerS, WallS: float64(stopped-started) / nsPerS,
		HostBusy: hostBusy, Scheduled: scheduled, Unsent: unsent, FinalLagNs: lag, Fatal: optional(r.fatal),
	}
}

// processCPUNs is this process's user and system CPU: the client's loop, the
// driver's goroutines and the garbage collector, all of it the client's cost.
func processCPUNs() int64 {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return usage.Utime.Nano() + usage.Stime.Nano()
}

// hostTimes are the first line of /proc/stat: total and idle (idle + iowait) jiffies; zero where there is none.
type hostTimes struct{ total, idle float64 }

func readHostTimes() hostTimes {
	file, err := os.Open("/proc/stat")
	if err != nil {
		return hostTimes{}
	}
	defer file.Close()
	scanner := bufio.NewScanner(file)
	if !scanner.Scan() {
		return hostTimes{}
	}
	fields := strings.Fields(scanner.Text())
	var t hostTimes
	for i, f := range fields[1:] {
		v, _ := strconv.ParseFloat(f, 64)
		if i >= 8 { // guest times are already counted in user and nice
			break
		}
		t.total += v
		if i == 3 || i == 4 {
			t.idle += v
		}
	}
	return t
}

// busyShare is the share of all the host's CPU time that was not idle, as Python's _busy_share.
func busyShare(before, after hostTimes) float64 {
	elapsed := after.total - before.total
	if elapsed <= 0 {
		return 0
	}
	return min(1, max(0, 1-(after.idle-before.idle)/elapsed))
}
