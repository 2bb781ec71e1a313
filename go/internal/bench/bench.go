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

// Samples holds one value per repetition (--count) of a benchmark, under
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

// Measure runs op under testing.Benchmark count times, each run aiming at
// benchtime, and returns one sample per run plus the loop count (b.N) of
// the last run. op returns an error to abort; the first error stops the
// measurement.
func Measure(benchtime string, count int, op func() error) (Samples, int, error) {
	s := Samples{WallNs: []float64{}, AllocTotalBytes: []int64{}, AllocsTotal: []int64{}}
	if err := SetBenchtime(benchtime); err != nil {
		return s, 0, err
	}
	loops := 0
	for k := 0; k < count; k++ {
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
			return s, 0, opErr
		}
		if res.N == 0 {
			return s, 0, fmt.Errorf("benchmark did not run")
		}
		s.WallNs = append(s.WallNs, float64(res.T)/float64(res.N))
		s.AllocTotalBytes = append(s.AllocTotalBytes, res.AllocedBytesPerOp())
		s.AllocsTotal = append(s.AllocsTotal, res.AllocsPerOp())
		loops = res.N
	}
	return s, loops, nil
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
