package format

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"stratabench.dev/go/internal/bench"
	"stratabench.dev/go/internal/dataset"
)

// Codec is a file format: records to bytes and back. The file codecs
// (json, gob, msgp, msgpack) implement only this and register with
// RegisterCodec, which gives them the common benchmark procedure.
type Codec interface {
	Name() string
	// Encode writes recs to w.
	Encode(w io.Writer, recs dataset.Records) error
	// Decode reads one list from r into *dst, reusing *dst's backing
	// array where the library does so (the warm variant relies on it).
	Decode(r io.Reader, dst *dataset.Records) error
}

// RegisterCodec registers c as a format measured by codecFormat.
func RegisterCodec(rank int, c Codec) { Register(rank, codecFormat{c}) }

// LookupCodec returns the file codec called name.
func LookupCodec(name string) (Codec, bool) {
	f, ok := Lookup(name)
	if !ok {
		return nil, false
	}
	cf, ok := f.(codecFormat)
	return cf.Codec, ok
}

// AssetPath is where the asset of codec name lives in cfg's workdir.
func AssetPath(cfg Config, name string) string {
	return filepath.Join(cfg.Workdir, fmt.Sprintf("bulkload-%d-%d.%s", cfg.Seed, cfg.Size, name))
}

// WriteAsset encodes recs with c into path (through a temporary file, so a
// half-written asset never stays behind under the final name).
func WriteAsset(c Codec, path string, recs dataset.Records) (int64, error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = c.Encode(w, recs)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return 0, fmt.Errorf("encode %s: %w", c.Name(), err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return 0, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// Load is the timed operation: open the asset and decode it into *dst.
func Load(c Codec, path string, dst *dataset.Records) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return c.Decode(f, dst)
}

type codecFormat struct{ Codec }

func (cf codecFormat) Cells(_ context.Context, recs dataset.Records, cfg Config, variants []string) []*Cell {
	path := AssetPath(cfg, cf.Name())
	size, err := WriteAsset(cf.Codec, path, recs)
	cells := make([]*Cell, 0, len(variants))
	for _, v := range variants {
		c := &Cell{Result: bench.NewResult(cf.Name(), v)}
		switch {
		case err != nil:
			c.Result.Fail(err)
		case v == Encode:
			c.sample = cf.encodeSample(recs, &c.Result, cfg.Checked[CellName(cf.Name(), v)])
		case v == Warm || v == Fresh:
			c.sample = cf.loadSample(path, v, &c.Result, cfg.Checked[CellName(cf.Name(), v)])
		default:
			c.Result.Fail(fmt.Errorf("unknown variant %q: want warm, fresh or encode", v))
		}
		if err == nil {
			c.Result.SizeBytes = &size
			// The caller sizes the asset after compression from the file itself.
			c.Result.Extra["asset"] = path
		}
		cells = append(cells, c)
	}
	return cells
}

// encodeSample times encoding recs into one reused buffer; the last sample
// checks the bytes written by decoding them and hashing the records, unless
// an earlier process checked them (checked).
func (cf codecFormat) encodeSample(recs dataset.Records, res *bench.Result, checked bool) func(context.Context, string, bool) (bench.Sample, error) {
	return func(_ context.Context, benchtime string, last bool) (bench.Sample, error) {
		var buf bytes.Buffer
		op := func() error {
			buf.Reset()
			return cf.Encode(&buf, recs)
		}
		if bench.ReportsFirstRun(benchtime) {
			// The buffer grows once, untimed, as in testing.Benchmark's first run otherwise.
			if err := op(); err != nil {
				return bench.Sample{}, wrap("encode", cf.Name(), err)
			}
		}
		one, err := bench.Measure(benchtime, op)
		if err != nil || !last || checked {
			return one, wrap("encode", cf.Name(), err)
		}
		var back dataset.Records
		if err := cf.Decode(bytes.NewReader(buf.Bytes()), &back); err != nil {
			return one, fmt.Errorf("decode what %s encoded: %w", cf.Name(), err)
		}
		return one, checkRecords(cf.Name(), back, res)
	}
}

// loadSample times loading the asset; the last sample hashes what it loaded,
// unless an earlier process checked it (checked).
func (cf codecFormat) loadSample(path string, variant string, res *bench.Result, checked bool) func(context.Context, string, bool) (bench.Sample, error) {
	return func(_ context.Context, benchtime string, last bool) (bench.Sample, error) {
		var dst dataset.Records
		op := func() error {
			dst = nil
			return Load(cf.Codec, path, &dst)
		}
		if variant == Warm {
			// The seed's slice was warm after its first iteration: every
			// measured operation sees the list of the one before.
			op = func() error { return Load(cf.Codec, path, &dst) }
		}
		if bench.ReportsFirstRun(benchtime) {
			// Untimed, as testing.Benchmark's first run is otherwise: the
			// warm destination filled, the file in the page cache.
			if err := op(); err != nil {
				return bench.Sample{}, wrap("load", cf.Name(), err)
			}
		}
		one, err := bench.Measure(benchtime, op)
		if err != nil || !last || checked {
			return one, wrap("load", cf.Name(), err)
		}
		return one, checkRecords(cf.Name(), dst, res)
	}
}

// wrap names the step and format of err; nil stays nil.
func wrap(step, name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %s: %w", step, name, err)
}

// checkRecords puts the canonical hash and count of recs into res.
func checkRecords(name string, recs dataset.Records, res *bench.Result) error {
	hash, err := dataset.Hash(recs)
	if err != nil {
		return fmt.Errorf("hash %s: %w", name, err)
	}
	res.Hash = &hash
	res.Extra["records"] = len(recs)
	return nil
}
