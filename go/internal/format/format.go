// Package format holds the bulkload formats of docs/studies/bulkload.md §4.1. Each format lives
// in one file and registers itself in init(); the command finds them here,
// with no import list to keep.
package format

import (
	"context"
	"fmt"
	"sort"
	"time"

	"stratabench.dev/go/internal/dataset"
)

// Variants of the load operation (docs/studies/bulkload.md §4.1, load semantics).
const (
	// Warm keeps the destination between operations, as the seed's
	// package-level slice did: decoders reuse its backing array.
	Warm = "warm"
	// Fresh empties the destination before every operation, as at process
	// start: every operation builds new records.
	Fresh = "fresh"
	// Encode is the other direction: the records to the format's bytes,
	// written into one reused in-memory buffer (no file: a store or a
	// socket would take the bytes next).
	Encode = "encode"
)

// Variants lists every variant, in the order results list them.
var Variants = []string{Warm, Fresh, Encode}

// Config is what every cell gets besides the records.
type Config struct {
	Seed    int64
	Size    int
	Workdir string
	// Count is the samples of every cell, taken in passes (RunPasses).
	Count     int
	Benchtime string
	// Loops, keyed by CellName, fixes a cell's iterations per sample (b.N)
	// in place of Benchtime's ramp-up: a later process of a run measures
	// with the loop count the first one found, without ramping again.
	Loops map[string]int
	// Checked, keyed by CellName, names the cells an earlier process of
	// the run already checked (what they produced hashed to the dataset):
	// their last sample skips the check, a decode of what an encode wrote
	// and a hash of the records (most of what a later process spent beyond
	// its samples: the bulkload suite's go.py has the measurements), and
	// their line carries no hash.
	Checked map[string]bool
	// Limits of the embed cell's compilation.
	EmbedMaxRSS  int64
	EmbedTimeout time.Duration
	// EmbedCache, when set, is the directory of this asset's cached build
	// (the caller names it by content: sources, Go version, size, seed).
	// A complete one is reused with its recorded build costs; otherwise
	// the build is measured and stored there.
	EmbedCache string
}

// CellName names a cell as --cells and --loops do: "format/variant".
func CellName(format, variant string) string { return format + "/" + variant }

// BenchtimeOf is the -benchtime a cell's samples run with: its fixed loop
// count ("Nx") when Loops holds one, else Benchtime.
func (c Config) BenchtimeOf(format, variant string) string {
	if n, ok := c.Loops[CellName(format, variant)]; ok {
		return fmt.Sprintf("%dx", n)
	}
	return c.Benchtime
}

// Format measures loading one kind of asset.
type Format interface {
	// Name is the format's name on the command line and in results.
	Name() string
	// Cells writes the asset for recs under cfg.Workdir (untimed) and
	// returns one cell per variant it measures, in the order given, a cell
	// that cannot be measured already failed. RunPasses samples them.
	Cells(ctx context.Context, recs dataset.Records, cfg Config, variants []string) []*Cell
}

type entry struct {
	rank   int
	format Format
}

var registry = map[string]entry{}

// Register adds f under its name. rank orders listings (the seed's table
// order). A duplicate name is a programming error and panics at init.
func Register(rank int, f Format) {
	if _, dup := registry[f.Name()]; dup {
		panic(fmt.Sprintf("format %q registered twice", f.Name()))
	}
	registry[f.Name()] = entry{rank, f}
}

// Lookup returns the format called name.
func Lookup(name string) (Format, bool) {
	e, ok := registry[name]
	return e.format, ok
}

// Names lists the registered formats in rank order.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return registry[names[i]].rank < registry[names[j]].rank })
	return names
}
