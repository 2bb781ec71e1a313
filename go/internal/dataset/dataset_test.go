package dataset

import (
	"bytes"
	"testing"
	"time"
)

// Test vectors of docs/studies/bulkload.md §3.2 (seed 100).
var vectors = []struct {
	n    int
	hash string
	size int
}{
	{1, "666dae3acff790b581a4d5f7b8db2d4708790bba", 152},
	{10, "69e2a61caa30fcff9ea19db1b95611ab9f84fd2a", 1776},
	{1000, "f95cc302db8529e5daabc7211c27616afbe832ba", 197438},
}

func TestHashVectors(t *testing.T) {
	for _, v := range vectors {
		recs := Generate(v.n, 100)
		got, err := Hash(recs)
		if err != nil {
			t.Fatal(err)
		}
		if got != v.hash {
			t.Errorf("n=%d: hash %s, want %s", v.n, got, v.hash)
		}
		b, err := Canonical(recs)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != v.size {
			t.Errorf("n=%d: canonical size %d, want %d", v.n, len(b), v.size)
		}
	}
}

func TestFirstRecord(t *testing.T) {
	r := Generate(1, 100)[0]
	want := Record{
		Bool:   true,
		Int:    1816137624592625432,
		Float:  -2.4122147266495095,
		String: "384203C438D4E94BF399CBD88BBCAF",
		Time:   time.Unix(965186882, 28350735).UTC(),
	}
	if r != want {
		t.Errorf("first record %+v, want %+v", r, want)
	}
	if s := r.Time.Format(time.RFC3339Nano); s != "2000-08-02T03:28:02.028350735Z" {
		t.Errorf("time %s", s)
	}
}

func TestCanonicalShape(t *testing.T) {
	b, err := Canonical(Generate(2, 100))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte(`[{"bool":true,"int":1816137624592625432,"float":-2.4122147266495095,"string":"384203C438D4E94BF399CBD88BBCAF","time":"2000-08-02T03:28:02.028350735Z"},{`)) {
		t.Errorf("unexpected canonical prefix %.200s", b)
	}
	if !bytes.HasSuffix(b, []byte("}]\n")) {
		t.Errorf("canonical form must end with ]\\n")
	}
}

func TestCanonicalNormalizesZone(t *testing.T) {
	recs := Generate(10, 100)
	want, _ := Hash(recs)
	local := make(Records, len(recs))
	copy(local, recs)
	zone := time.FixedZone("X", -4*3600)
	for i := range local {
		local[i].Time = local[i].Time.In(zone)
	}
	if got, _ := Hash(local); got != want {
		t.Errorf("hash of same instants in another zone %s, want %s", got, want)
	}
	if local[0].Time.Location() != zone {
		t.Errorf("Hash modified its argument")
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := Generate(100, 7), Generate(100, 7)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("record %d differs between runs", i)
		}
	}
}
