package format

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"stratabench.dev/go/internal/dataset"
)

func codecs(t *testing.T) []Codec {
	var cs []Codec
	for _, n := range Names() {
		if c, ok := LookupCodec(n); ok {
			cs = append(cs, c)
		}
	}
	if len(cs) != len(Names())-1 {
		t.Fatalf("want every format but embed as a file codec, have %d", len(cs))
	}
	return cs
}

func equalRecords(t *testing.T, name string, got, want dataset.Records) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", name, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Bool != w.Bool || g.Int != w.Int || g.Float != w.Float || g.String != w.String || !g.Time.Equal(w.Time) {
			t.Fatalf("%s: record %d = %+v, want %+v", name, i, g, w)
		}
	}
}

func TestCodecRoundTrip(t *testing.T) {
	recs := dataset.Generate(1000, 100)
	for _, c := range codecs(t) {
		var buf bytes.Buffer
		if err := c.Encode(&buf, recs); err != nil {
			t.Fatalf("%s encode: %v", c.Name(), err)
		}
		var got dataset.Records
		if err := c.Decode(bytes.NewReader(buf.Bytes()), &got); err != nil {
			t.Fatalf("%s decode: %v", c.Name(), err)
		}
		equalRecords(t, c.Name(), got, recs)
		if h, _ := dataset.Hash(got); h != hash1000 {
			t.Errorf("%s: hash %s, want %s", c.Name(), h, hash1000)
		}
	}
}

// Sizes at 1,000 records; the json asset is the canonical form itself.
func TestAssetSizesAndJSONIsCanonical(t *testing.T) {
	recs := dataset.Generate(1000, 100)
	want := map[string]int64{"json": 197438, "gob": 118716, "msgp": 141399, "msgpack": 136399}
	dir := t.TempDir()
	for _, c := range codecs(t) {
		path := AssetPath(Config{Workdir: dir, Seed: 100, Size: 1000}, c.Name())
		n, err := WriteAsset(c, path, recs)
		if err != nil {
			t.Fatal(err)
		}
		if w, pinned := want[c.Name()]; pinned && n != w {
			t.Errorf("%s asset: %d bytes, want %d", c.Name(), n, want[c.Name()])
		}
		if c.Name() == "json" {
			b, _ := os.ReadFile(path)
			sum := sha1.Sum(b)
			if hex.EncodeToString(sum[:]) != hash1000 {
				t.Errorf("sha1 of the json asset is not the dataset hash")
			}
		}
	}
}

// The msgp and msgpack wire details of docs/studies/bulkload.md §4.1.
func TestWireDetails(t *testing.T) {
	recs := dataset.Generate(1, 100)
	var b bytes.Buffer
	msgpCodec{}.Encode(&b, recs)
	// array of 1, map of 5, ..., "time" then ext8 len 12 type 5
	if !bytes.Contains(b.Bytes(), []byte("\xa4time\xc7\x0c\x05")) {
		t.Errorf("msgp time is not extension 5 with a 12-byte payload: %q", b.Bytes())
	}
	b.Reset()
	msgpackCodec{}.Encode(&b, recs)
	if !bytes.Contains(b.Bytes(), []byte("\xa4Bool")) || !bytes.Contains(b.Bytes(), []byte("\xa4Time\xd7\xff")) {
		t.Errorf("msgpack keys or timestamp extension -1 missing: %q", b.Bytes())
	}
}

// Warm: a decoder given a destination with room keeps its backing array.
func TestWarmDecodeReusesDestination(t *testing.T) {
	recs := dataset.Generate(100, 100)
	for _, c := range codecs(t) {
		var buf bytes.Buffer
		c.Encode(&buf, recs)
		dst := make(dataset.Records, len(recs))
		first := &dst[0]
		if err := c.Decode(bytes.NewReader(buf.Bytes()), &dst); err != nil {
			t.Fatal(err)
		}
		if &dst[0] != first {
			t.Errorf("%s: warm decode replaced the backing array", c.Name())
		}
		equalRecords(t, c.Name(), dst, recs)
	}
}

// Both variants give the dataset hash; fresh allocates at least the list's
// backing array on every operation, which warm does not: also with one
// operation a sample ("1x"), which testing.Benchmark times without a run
// before it, so the cell runs one untimed first.
func TestRunWarmAndFresh(t *testing.T) {
	const n = 1000
	recs := dataset.Generate(n, 100)
	array := int64(n * unsafe.Sizeof(dataset.Record{}))
	// sonic keeps its decode buffers in a sync.Pool, whose fast slot belongs
	// to one P: testing.Benchmark runs each sample in a new goroutine, and a
	// sample scheduled on another P than the last Put misses the pool and
	// allocates ~165 KB/op more, so warm and fresh overlapped by chance (a CI
	// run failed on it). One P makes the bytes per op the same every run.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, loops := range []int{5, 1} {
		cfg := Config{Seed: 100, Size: n, Workdir: t.TempDir(), Count: 2, Benchtime: fmt.Sprintf("%dx", loops)}
		for _, c := range codecs(t) {
			f, _ := Lookup(c.Name())
			res := runCells(t, f, recs, cfg, Warm, Fresh)
			for _, r := range res {
				if r.Error != nil {
					t.Fatalf("%s/%s failed: %s", r.Format, r.Variant, *r.Error)
				}
				if r.Hash == nil || *r.Hash != hash1000 {
					t.Errorf("%s/%s: hash %v", r.Format, r.Variant, r.Hash)
				}
				if len(r.Samples.WallNs) != 2 || r.Loops != loops {
					t.Errorf("%s/%s: %d samples, %d loops; want 2 and %d", r.Format, r.Variant, len(r.Samples.WallNs), r.Loops, loops)
				}
			}
			for k := range 2 {
				warm, fresh := res[0].Samples.AllocTotalBytes[k], res[1].Samples.AllocTotalBytes[k]
				if fresh-warm < array {
					t.Errorf("%s at %s, sample %d: fresh allocates %d B/op, warm %d: fresh should build a new %d-byte list",
						c.Name(), cfg.Benchtime, k+1, fresh, warm, array)
				}
			}
		}
	}
}

func TestRunReportsWriteFailure(t *testing.T) {
	f, _ := Lookup("gob")
	cfg := Config{Seed: 100, Size: 10, Workdir: "/nonexistent/stratabench", Count: 1, Benchtime: "1x"}
	for _, r := range runCells(t, f, dataset.Generate(10, 100), cfg, Warm, Fresh) {
		if r.Error == nil || len(r.Samples.WallNs) != 0 {
			t.Errorf("%s/%s: want a failed cell with no samples, got %+v", r.Format, r.Variant, r)
		}
	}
}
