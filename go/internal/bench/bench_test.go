package bench

import (
	"errors"
	"strings"
	"testing"
)

func TestMeasure(t *testing.T) {
	calls := 0
	one, err := Measure("7x", func() error { calls++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if one.Loops != 7 || one.WallNs <= 0 {
		t.Errorf("sample %+v", one)
	}
	// testing.Benchmark runs once with N=1, then with N=7.
	if calls != 1+7 {
		t.Errorf("op ran %d times", calls)
	}
	var s Samples
	s.Add(one)
	s.Add(Sample{WallNs: 2, AllocTotalBytes: 3, AllocsTotal: 4})
	if len(s.WallNs) != 2 || s.WallNs[1] != 2 || s.AllocTotalBytes[1] != 3 || s.AllocsTotal[1] != 4 {
		t.Errorf("samples %+v", s)
	}
}

func TestMeasureStopsOnError(t *testing.T) {
	boom := errors.New("boom")
	if _, err := Measure("5x", func() error { return boom }); !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
}

func TestReportsFirstRun(t *testing.T) {
	for benchtime, want := range map[string]bool{"1x": true, "10ms": true, "1s": true, "2x": false, "40x": false} {
		if got := ReportsFirstRun(benchtime); got != want {
			t.Errorf("ReportsFirstRun(%q) = %v, want %v", benchtime, got, want)
		}
	}
}

func TestBadBenchtime(t *testing.T) {
	if err := SetBenchtime("soon"); err == nil {
		t.Error("want an error")
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"8GiB": 8 << 30, "512MiB": 512 << 20, "2G": 2 << 30, "1000": 1000, "1.5KiB": 1536, "3MB": 3e6} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "lots", "-1G", "0", "8x"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) succeeded", bad)
		}
	}
}

func TestFailKeepsShape(t *testing.T) {
	r := NewResult("gob", "warm")
	r.Samples.WallNs = append(r.Samples.WallNs, 1)
	r.Fail(errors.New("two\nlines"))
	if r.Error == nil || strings.Contains(*r.Error, "\n") || len(r.Samples.WallNs) != 0 || r.Samples.WallNs == nil {
		t.Errorf("%+v", r)
	}
}
