package format

import (
	"context"
	"reflect"
	"testing"

	"stratabench.dev/go/internal/bench"
	"stratabench.dev/go/internal/dataset"
)

// docs/studies/bulkload.md §3.2, seed 100.
const (
	hash10   = "69e2a61caa30fcff9ea19db1b95611ab9f84fd2a"
	hash1000 = "f95cc302db8529e5daabc7211c27616afbe832ba"
)

// The seed's five first, then ours; the Python suite lists the same names
// (suites/bulkload/suite.py: GO_FORMATS, GO_MORE_FORMATS).
func TestNamesInSeedOrder(t *testing.T) {
	want := []string{"embed", "json", "gob", "msgp", "msgpack",
		"msgpack5", "go-json", "jsoniter", "sonic", "segmentio-json", "cbor", "bson", "avro", "protobuf", "flatbuffers", "arrow", "xml"}
	if got := Names(); !reflect.DeepEqual(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
}

func TestRegisterDuplicatePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("registering a second json format did not panic")
		}
	}()
	RegisterCodec(99, jsonCodec{})
}

func TestLookupCodec(t *testing.T) {
	if _, ok := LookupCodec("embed"); ok {
		t.Error("embed is not a file codec")
	}
	if _, ok := LookupCodec("nope"); ok {
		t.Error("unknown name found")
	}
	if c, ok := LookupCodec("gob"); !ok || c.Name() != "gob" {
		t.Error("gob not found")
	}
}

func runCells(t *testing.T, f Format, recs dataset.Records, cfg Config, variants ...string) []bench.Result {
	t.Helper()
	var out []bench.Result
	cells := f.Cells(context.Background(), recs, cfg, variants)
	if err := RunPasses(context.Background(), cells, cfg, func(r bench.Result) error { out = append(out, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(out) != len(variants) {
		t.Fatalf("%s: %d results for %d variants", f.Name(), len(out), len(variants))
	}
	return out
}
