package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestInfo(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"info"}, &out); err != nil {
		t.Fatal(err)
	}
	var info struct {
		GoVersion  string   `json:"go_version"`
		GOMAXPROCS int      `json:"gomaxprocs"`
		GOOS       string   `json:"goos"`
		Formats    []string `json:"formats"`
	}
	if err := json.Unmarshal(out.Bytes(), &info); err != nil {
		t.Fatal(err)
	}
	if info.GoVersion != runtime.Version() || info.GOOS != runtime.GOOS || info.GOMAXPROCS < 1 {
		t.Errorf("info = %+v", info)
	}
	if !strings.HasPrefix(strings.Join(info.Formats, ","), "embed,json,gob,msgp,msgpack,msgpack5,") || len(info.Formats) < 15 {
		t.Errorf("formats = %v", info.Formats)
	}
}

func TestHash(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"hash", "--seed", "100", "--size", "10"}, &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "69e2a61caa30fcff9ea19db1b95611ab9f84fd2a\n" {
		t.Errorf("hash printed %q", got)
	}
}

func TestExportJSONIsCanonical(t *testing.T) {
	path := filepath.Join(t.TempDir(), "list.json")
	if err := run([]string{"export", "--format", "json", "--size", "1000", "--out", path}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum(b)
	if got := hex.EncodeToString(sum[:]); got != "f95cc302db8529e5daabc7211c27616afbe832ba" {
		t.Errorf("sha1 of exported json = %s", got)
	}
}

func TestBulkloadLines(t *testing.T) {
	var out bytes.Buffer
	args := []string{"bulkload", "--size", "10", "--workdir", t.TempDir(),
		"--formats", "json,msgpack", "--variants", "fresh,warm", "--benchtime", "3x", "--count", "2"}
	if err := run(args, &out); err != nil {
		t.Fatal(err)
	}
	var cells []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var r struct {
			Format, Variant string
			Loops           int
			Samples         map[string][]float64
			Hash            *string
			Error           *string
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if r.Error != nil || r.Hash == nil || *r.Hash != "69e2a61caa30fcff9ea19db1b95611ab9f84fd2a" || r.Loops != 3 {
			t.Errorf("bad cell %s", sc.Text())
		}
		for _, k := range []string{"wall_ns", "alloc_total_bytes", "allocs_total"} {
			if len(r.Samples[k]) != 2 {
				t.Errorf("%s/%s: %d %s samples", r.Format, r.Variant, len(r.Samples[k]), k)
			}
		}
		cells = append(cells, r.Format+"/"+r.Variant)
	}
	if got := strings.Join(cells, " "); got != "json/fresh json/warm msgpack/fresh msgpack/warm" {
		t.Errorf("cells %s", got)
	}
}

// bulkloadLine is what the tests read of a bulkload line.
type bulkloadLine struct {
	Format, Variant string
	Loops           int
	Hash            *string
	Error           *string
}

// bulkloadLines runs bulkload of 10 records, one sample a cell, with args
// besides, and returns its lines; a failed cell fails the test.
func bulkloadLines(t *testing.T, args ...string) []bulkloadLine {
	t.Helper()
	var out bytes.Buffer
	if err := run(append([]string{"bulkload", "--size", "10", "--workdir", t.TempDir(), "--count", "1"}, args...), &out); err != nil {
		t.Fatal(err)
	}
	var lines []bulkloadLine
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var r bulkloadLine
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Error != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, r)
	}
	return lines
}

func TestCellsAndLoopsPickCellsAndFixTheirIterations(t *testing.T) {
	var got []string
	for _, r := range bulkloadLines(t, "--benchtime", "3x", "--cells", "msgpack/encode,json/warm,msgpack/warm",
		"--loops", "json/warm=7,msgpack/encode=2") {
		got = append(got, fmt.Sprintf("%s/%s=%d", r.Format, r.Variant, r.Loops))
	}
	// A format's cells run together, where it is first named; a cell without a fixed count ramps to --benchtime.
	if s := strings.Join(got, " "); s != "msgpack/encode=2 msgpack/warm=3 json/warm=7" {
		t.Errorf("cells %s", s)
	}
}

func TestCheckedCellsSkipTheirCheck(t *testing.T) {
	hashed := map[string]bool{}
	for _, r := range bulkloadLines(t, "--benchtime", "2x", "--cells", "json/warm,json/encode,gob/warm",
		"--checked", "json/encode,gob/warm") {
		hashed[r.Format+"/"+r.Variant] = r.Hash != nil
	}
	// An earlier process checked json/encode and gob/warm: only json/warm is hashed here.
	if want := map[string]bool{"json/warm": true, "json/encode": false, "gob/warm": false}; fmt.Sprint(hashed) != fmt.Sprint(want) {
		t.Errorf("hashed %v, want %v", hashed, want)
	}
	if err := run([]string{"bulkload", "--workdir", t.TempDir(), "--checked", "json/sideways"}, io.Discard); err == nil ||
		!strings.Contains(err.Error(), `bad cell "json/sideways"`) {
		t.Errorf("a bad --checked cell: %v", err)
	}
}

func TestSamplesRunOnGomaxprocs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	for flags, want := range map[string]float64{"": 1, "--gomaxprocs=3": 3} {
		var out bytes.Buffer
		args := []string{"bulkload", "--size", "10", "--workdir", t.TempDir(), "--benchtime", "2x", "--count", "1",
			"--cells", "json/warm,msgpack/encode"}
		if flags != "" {
			args = append(args, flags)
		}
		if err := run(args, &out); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(&out)
		for sc.Scan() {
			var r struct{ Extra map[string]any }
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			if r.Extra["gomaxprocs"] != want {
				t.Errorf("%q: line %s, want gomaxprocs %v", flags, sc.Text(), want)
			}
		}
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS left at %d, was %d", after, before)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"nope"},
		{"info", "--bogus"},
		{"hash", "--size", "0"},
		{"hash", "--size", "x"},
		{"bulkload", "--workdir", "/tmp", "--formats", "json,yaml"},
		{"bulkload", "--workdir", "/tmp", "--variants", "tepid"},
		{"bulkload", "--formats", "json"},
		{"bulkload", "--workdir", "/tmp", "--count", "0"},
		{"bulkload", "--workdir", "/tmp", "--gomaxprocs", "0"},
		{"bulkload", "--workdir", "/tmp", "--benchtime", "soon"},
		{"bulkload", "--workdir", "/tmp", "--embed-max-rss", "lots"},
		{"bulkload", "--workdir", "/tmp", "--cells", "json"},
		{"bulkload", "--workdir", "/tmp", "--cells", "json/tepid"},
		{"bulkload", "--workdir", "/tmp", "--cells", ","},
		{"bulkload", "--workdir", "/tmp", "--loops", "json/warm"},
		{"bulkload", "--workdir", "/tmp", "--loops", "json/warm=0"},
		{"bulkload", "--workdir", "/tmp", "--loops", "yaml/warm=3"},
		{"export", "--format", "embed", "--out", "/tmp/x"},
		{"export", "--format", "json"},
	} {
		var out bytes.Buffer
		err := run(args, &out)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: want a usage error, got %v", args, err)
		} else if strings.Contains(ue.msg, "\n") {
			t.Errorf("%v: message is not one line: %q", args, ue.msg)
		}
		if out.Len() != 0 {
			t.Errorf("%v: printed %q on stdout", args, out.String())
		}
	}
}

func TestExitWithStdinCancelsThenExits(t *testing.T) {
	reader, writer := io.Pipe()
	exited := make(chan int, 1)
	ctx := exitWithStdin(context.Background(), reader, 50*time.Millisecond, func(code int) { exited <- code })
	select {
	case <-ctx.Done():
		t.Fatal("cancelled while stdin is open")
	case <-time.After(100 * time.Millisecond):
	}
	writer.Close() // the parent has died
	select {
	case <-ctx.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("not cancelled after stdin closed")
	}
	select {
	case code := <-exited:
		if code != 3 {
			t.Fatalf("exit code %d, want 3", code)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("did not exit after the grace period")
	}
}
