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

func (cf codecFormat) Run(ctx context.Context, recs dataset.Records, cfg Config, variants []string, emit func(bench.Result)) {
	path := AssetPath(cfg, cf.Name())
	size, err := WriteAsset(cf.Codec, path, recs)
	for _, v := range variants {
		res := bench.NewResult(cf.Name(), v)
		if err != nil {
			res.Fail(err)
		} else {
			res.SizeBytes = &size
			// The caller sizes the asset after compression from the file itself.
			res.Extra["asset"] = path
			if v == Encode {
				cf.measureEncode(recs, cfg, &res)
			} else {
				cf.measure(path, cfg, v, &res)
			}
		}
		emit(res)
	}
}

// measureEncode times encoding recs into one reused buffer, then checks
// the last bytes written by decoding them and hashing the records.
func (cf codecFormat) measureEncode(recs dataset.Records, cfg Config, res *bench.Result) {
	var buf bytes.Buffer
	samples, loops, err := bench.Measure(cfg.BenchtimeOf(cf.Name(), Encode), cfg.Count, func() error {
		buf.Reset()
		return cf.Encode(&buf, recs)
	})
	if err != nil {
		res.Fail(fmt.Errorf("encode %s: %w", cf.Name(), err))
		return
	}
	var back dataset.Records
	if err := cf.Decode(bytes.NewReader(buf.Bytes()), &back); err != nil {
		res.Fail(fmt.Errorf("decode what %s encoded: %w", cf.Name(), err))
		return
	}
	hash, err := dataset.Hash(back)
	if err != nil {
		res.Fail(fmt.Errorf("hash %s: %w", cf.Name(), err))
		return
	}
	res.Samples, res.Loops, res.Hash = samples, loops, &hash
	res.Extra["records"] = len(back)
}

func (cf codecFormat) measure(path string, cfg Config, variant string, res *bench.Result) {
	var dst dataset.Records
	var op func() error
	switch variant {
	case Warm:
		// The seed's slice was warm after its first iteration; load once
		// untimed so that every measured operation sees the same state.
		if err := Load(cf.Codec, path, &dst); err != nil {
			res.Fail(fmt.Errorf("load %s: %w", cf.Name(), err))
			return
		}
		op = func() error { return Load(cf.Codec, path, &dst) }
	case Fresh:
		op = func() error {
			dst = nil
			return Load(cf.Codec, path, &dst)
		}
	default:
		res.Fail(fmt.Errorf("unknown variant %q: want warm, fresh or encode", variant))
		return
	}
	samples, loops, err := bench.Measure(cfg.BenchtimeOf(cf.Name(), variant), cfg.Count, op)
	if err != nil {
		res.Fail(fmt.Errorf("load %s: %w", cf.Name(), err))
		return
	}
	hash, err := dataset.Hash(dst)
	if err != nil {
		res.Fail(fmt.Errorf("hash %s: %w", cf.Name(), err))
		return
	}
	res.Samples, res.Loops, res.Hash = samples, loops, &hash
	res.Extra["records"] = len(dst)
}
