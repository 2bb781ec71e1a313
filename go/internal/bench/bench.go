// Package bench times one operation with testing.Benchmark and defines the
// result record stratabench-go prints, one JSON object per line.
package bench

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Samples holds one value per sample (--count) of a benchmark, under
// the metric names of DESIGN.md: wall_ns is ns/op, alloc_total_bytes B/op,
// allocs_total allocs/op, as `go test -bench` reports them.
type Samples struct {
	WallNs          []float64 `json:"wall_ns"`
	AllocTotalBytes []int64   `json:"alloc_total_bytes"`
	AllocsTotal     []int64   `json:"allocs_total"`
}

// Result is one cell, (format, variant), as printed on stdout.
//
// A failed cell keeps the shape: Error holds a one-line reason, Samples is
// empty, and whatever was measured before the failure stays in Extra.
// Pointers are nil (JSON null) for "not measured".
type Result struct {
	Format    string         `json:"format"`
	Variant   string         `json:"variant"`
	Loops     int            `json:"loops"`
	Samples   Samples        `json:"samples"`
	SizeBytes *int64         `json:"size_bytes"`
	Hash      *string        `json:"hash"`
	Extra     map[string]any `json:"extra"`
	Error     *string        `json:"error"`
}

// NewResult returns an empty result for the cell (format, variant).
func NewResult(format, variant string) Result {
	return Result{
		Format:  format,
		Variant: variant,
		Samples: Samples{WallNs: []float64{}, AllocTotalBytes: []int64{}, AllocsTotal: []int64{}},
		Extra:   map[string]any{},
	}
}

// Fail marks r as failed with a one-line reason and drops its samples.
func (r *Result) Fail(err error) {
	msg := oneLine(err.Error())
	r.Error = &msg
	r.Loops = 0
	r.Samples = Samples{WallNs: []float64{}, AllocTotalBytes: []int64{}, AllocsTotal: []int64{}}
}

func oneLine(s string) string {
	out := make([]rune, 0, len(s))
	for _, c := range s {
		if c == '\n' || c == '\r' || c == '\t' {
			c = ' '
		}
		out = append(out, c)
	}
	return string(out)
}

var initOnce sync.Once

// SetBenchtime sets the target time per benchmark (testing's -benchtime:
// a duration such as "1s" or an iteration count such as "100x").
func SetBenchtime(s string) error {
	initOnce.Do(func() {
		// Outside `go test`, testing's flags exist only after Init.
		if flag.Lookup("test.benchtime") == nil {
			testing.Init()
		}
	})
	if err := flag.Set("test.benchtime", s); err != nil {
		return fmt.Errorf("bad benchtime %q: want a duration like 1s or a count like 100x", s)
	}
	return nil
}

// Sample is one run of testing.Benchmark: the per-operation figures of
// Samples and the loop count (b.N) that gave them.
type Sample struct {
	WallNs          float64
	AllocTotalBytes int64
	AllocsTotal     int64
	Loops           int
}

// Add appends one sample's figures.
func (s *Samples) Add(one Sample) {
	s.WallNs = append(s.WallNs, one.WallNs)
	s.AllocTotalBytes = append(s.AllocTotalBytes, one.AllocTotalBytes)
	s.AllocsTotal = append(s.AllocsTotal, one.AllocsTotal)
}

// Measure runs op under testing.Benchmark once, aiming at benchtime, and
// returns its sample. testing.Benchmark collects garbage first, runs op
// once (b.N = 1), then as many times as benchtime asks: a count ("7x")
// directly, a duration after ramping up to it. op returns an error to
// abort; the first error stops the measurement.
func Measure(benchtime string, op func() error) (Sample, error) {
	if err := SetBenchtime(benchtime); err != nil {
		return Sample{}, err
	}
	var opErr error
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		if opErr != nil {
			return // testing.Benchmark calls again with a larger N
		}
		for i := 0; i < b.N; i++ {
			if err := op(); err != nil {
				opErr = err
				b.StopTimer()
				return
			}
		}
	})
	if opErr != nil {
		return Sample{}, opErr
	}
	if res.N == 0 {
		return Sample{}, fmt.Errorf("benchmark did not run")
	}
	return Sample{WallNs: float64(res.T) / float64(res.N), AllocTotalBytes: res.AllocedBytesPerOp(),
		AllocsTotal: res.AllocsPerOp(), Loops: res.N}, nil
}

// ReportsFirstRun tells whether testing.Benchmark may report its first run
// (b.N = 1) as the sample at benchtime: with "1x", or with a duration that
// one operation already fills. Otherwise that run is a warm-up and a later
// one is reported. A caller whose operation must not be timed cold (a
// destination to fill, a buffer to grow) runs it once untimed first.
func ReportsFirstRun(benchtime string) bool {
	n, ok := strings.CutSuffix(benchtime, "x")
	if !ok {
		return true
	}
	count, err := strconv.Atoi(n)
	return err != nil || count < 2
}

// ParseBytes reads a size such as 8GiB, 512MiB, 2G, 100M or a plain byte count.
func ParseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
		{"B", 1},
	}
	mult := int64(1)
	num := s
	for _, u := range units {
		if len(s) > len(u.suffix) && s[len(s)-len(u.suffix):] == u.suffix {
			mult, num = u.mult, s[:len(s)-len(u.suffix)]
			break
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("bad size %q: want a byte count like 8GiB or 512MiB", s)
	}
	return int64(v * float64(mult)), nil
}
