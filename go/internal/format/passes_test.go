package format

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"stratabench.dev/go/internal/bench"
)

// fakeCell records each sample it is asked for in log ("name:benchtime", or
// "name:benchtime:last") and reports loops; it fails at failAt (0-based).
func fakeCell(name string, loops int, failAt int, log *[]string) *Cell {
	format, variant, _ := strings.Cut(name, "/")
	c := &Cell{Result: bench.NewResult(format, variant)}
	taken := 0
	c.sample = func(_ context.Context, benchtime string, last bool) (bench.Sample, error) {
		entry := name + ":" + benchtime
		if last {
			entry += ":last"
		}
		*log = append(*log, entry)
		taken++
		if taken-1 == failAt {
			return bench.Sample{}, errors.New("boom")
		}
		return bench.Sample{WallNs: float64(taken), Loops: loops}, nil
	}
	return c
}

func TestRunPassesInterleavesTheCellsSamples(t *testing.T) {
	var log, emitted []string
	cells := []*Cell{fakeCell("json/warm", 4, -1, &log), fakeCell("gob/encode", 9, -1, &log), fakeCell("msgp/fresh", 2, -1, &log)}
	cfg := Config{Count: 3, Benchtime: "10ms", Loops: map[string]int{"gob/encode": 9}}
	var results []bench.Result
	err := RunPasses(context.Background(), cells, cfg, func(r bench.Result) error {
		emitted = append(emitted, fmt.Sprintf("%s/%s after %d samples", r.Format, r.Variant, len(log)))
		results = append(results, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every cell's first sample, then every cell's second...: one cell's samples are a pass apart. Only a first
	// sample without a fixed count ramps to the benchtime; the later ones take the loop count it found.
	want := []string{"json/warm:10ms", "gob/encode:9x", "msgp/fresh:10ms",
		"json/warm:4x", "gob/encode:9x", "msgp/fresh:2x",
		"json/warm:4x:last", "gob/encode:9x:last", "msgp/fresh:2x:last"}
	if !reflect.DeepEqual(log, want) {
		t.Errorf("samples taken\n got %v\nwant %v", log, want)
	}
	// A cell's line goes out right after its last sample.
	if want := []string{"json/warm after 7 samples", "gob/encode after 8 samples", "msgp/fresh after 9 samples"}; !reflect.DeepEqual(emitted, want) {
		t.Errorf("emitted %v, want %v", emitted, want)
	}
	for _, r := range results {
		if r.Error != nil || !reflect.DeepEqual(r.Samples.WallNs, []float64{1, 2, 3}) || len(r.Samples.AllocsTotal) != 3 {
			t.Errorf("%s/%s: %+v", r.Format, r.Variant, r)
		}
	}
}

func TestRunPassesDropsAFailedCellAndEmitsItAtOnce(t *testing.T) {
	var log, emitted []string
	broken := &Cell{Result: bench.NewResult("xml", "warm")}
	broken.Result.Fail(errors.New("no asset"))
	cells := []*Cell{fakeCell("json/warm", 4, 1, &log), broken, fakeCell("gob/warm", 3, -1, &log)}
	err := RunPasses(context.Background(), cells, Config{Count: 3, Benchtime: "1x"}, func(r bench.Result) error {
		state := "ok"
		if r.Error != nil {
			state = *r.Error
		}
		emitted = append(emitted, fmt.Sprintf("%s/%s %s %d", r.Format, r.Variant, state, len(r.Samples.WallNs)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"json/warm:1x", "gob/warm:1x", "json/warm:4x", "gob/warm:3x", "gob/warm:3x:last"}; !reflect.DeepEqual(log, want) {
		t.Errorf("samples taken %v, want %v", log, want)
	}
	if want := []string{"xml/warm no asset 0", "json/warm boom 0", "gob/warm ok 3"}; !reflect.DeepEqual(emitted, want) {
		t.Errorf("emitted %v, want %v", emitted, want)
	}
}

func TestRunPassesStopsOnAnEmitErrorOrAnEndedContext(t *testing.T) {
	var log []string
	full := errors.New("disk full")
	cells := []*Cell{fakeCell("json/warm", 1, -1, &log), fakeCell("gob/warm", 1, -1, &log)}
	if err := RunPasses(context.Background(), cells, Config{Count: 1, Benchtime: "1x"}, func(bench.Result) error { return full }); !errors.Is(err, full) {
		t.Errorf("err = %v, want %v", err, full)
	}
	if len(log) != 1 {
		t.Errorf("sampled on after the emit failed: %v", log)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := RunPasses(ctx, []*Cell{fakeCell("json/warm", 1, -1, &log)}, Config{Count: 1}, func(bench.Result) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want the context's", err)
	}
}
