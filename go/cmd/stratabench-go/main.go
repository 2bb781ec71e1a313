// Command stratabench-go is the Go side of stratabench's bulkload study
// (docs/studies/bulkload.md §4.1). The Python engine runs it as a subprocess.
//
//	stratabench-go bulkload --seed 100 --size 100000 --workdir DIR \
//	    [--formats embed,json,gob,msgp,msgpack] [--variants warm,fresh] \
//	    [--benchtime 1s] [--count 3] [--embed-max-rss 8GiB] [--embed-timeout 10m] \
//	    [--embed-cache DIR] [--cells gob/warm,json/encode] [--loops gob/warm=12,json/encode=3]
//	    [--gomaxprocs 1] [--checked gob/warm,json/encode]
//	stratabench-go info
//	stratabench-go export --format json|gob|msgp|msgpack --seed S --size N --out FILE
//	stratabench-go hash --seed S --size N
//	stratabench-go decode --format F --in FILE   (decode a file, print the records' canonical hash)
//	stratabench-go load   (one load client: spec on stdin, report on stdout; see load.go)
//
// bulkload takes --count samples of every cell in passes, one sample of each
// cell a pass (format.RunPasses), and prints a cell's line after its last.
// stdout carries only JSON Lines (bulkload, info) or the hash; diagnostics
// go to stderr. Bad flags or an unknown format exit with code 2 and a
// one-line message; a cell that fails is printed with its error and the
// run goes on.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"stratabench.dev/go/internal/bench"
	"stratabench.dev/go/internal/dataset"
	"stratabench.dev/go/internal/format"
)

// usageError is a bad command line: exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(f string, a ...any) error { return usageError{fmt.Sprintf(f, a...)} }

func main() {
	err := run(os.Args[1:], os.Stdout)
	if err == nil {
		return
	}
	fmt.Fprintf(os.Stderr, "stratabench-go: %s\n", strings.Join(strings.Fields(err.Error()), " "))
	var ue usageError
	if errors.As(err, &ue) {
		os.Exit(2)
	}
	os.Exit(1)
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usagef("missing command: want bulkload, info, export, hash, decode or load")
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "bulkload":
		return runBulkload(args, stdout)
	case "info":
		return runInfo(args, stdout)
	case "export":
		return runExport(args)
	case "hash":
		return runHash(args, stdout)
	case "decode":
		return runDecode(args, stdout)
	case "load":
		return runLoad(args, os.Stdin, stdout, os.Exit)
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, "usage: stratabench-go bulkload|info|export|hash|decode|load [flags]")
		return nil
	}
	return usagef("unknown command %q: want bulkload, info, export, hash, decode or load", cmd)
}

func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return usagef("%s: %v", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

func checkSize(size int) error {
	if size < 1 {
		return usagef("--size must be at least 1, got %d", size)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func runBulkload(args []string, stdout io.Writer) error {
	fs := newFlags("bulkload")
	seed := fs.Int64("seed", 100, "generator seed")
	size := fs.Int("size", 100000, "number of records")
	workdir := fs.String("workdir", "", "directory for assets and the embed build (required)")
	formats := fs.String("formats", strings.Join(format.Names(), ","), "comma-separated formats")
	variants := fs.String("variants", strings.Join(format.Variants, ","), "comma-separated variants: warm, fresh, encode")
	benchtime := fs.String("benchtime", "1s", "target time per benchmark (testing's -benchtime: 1s, 100x)")
	count := fs.Int("count", 3, "samples per cell, taken in passes over the cells (one sample of each a pass)")
	maxRSS := fs.String("embed-max-rss", "8GiB", "stop the embed compile when a process exceeds this resident size")
	timeout := fs.Duration("embed-timeout", 10*time.Minute, "stop the embed compile after this long")
	embedCache := fs.String("embed-cache", "", "directory of the embed program's cached build: reused when complete, else filled")
	lifeline := fs.Bool("exit-with-stdin", false, "stop (and stop the embed compile) when stdin closes: the parent has ended")
	only := fs.String("cells", "", "comma-separated format/variant cells to measure, in place of --formats x --variants")
	fixed := fs.String("loops", "", "comma-separated format/variant=N: a cell's iterations per sample, in place of --benchtime's ramp-up")
	procs := fs.Int("gomaxprocs", 1, "Ps (GOMAXPROCS) the samples run on; 1: an operation's collections run on its own core")
	checked := fs.String("checked", "", "comma-separated format/variant cells an earlier process checked: no check (and no hash) on their last sample")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkSize(*size); err != nil {
		return err
	}
	if *workdir == "" {
		return usagef("bulkload: --workdir is required")
	}
	if *count < 1 {
		return usagef("--count must be at least 1, got %d", *count)
	}
	if *timeout <= 0 {
		return usagef("--embed-timeout must be positive, got %s", *timeout)
	}
	if *procs < 1 {
		return usagef("--gomaxprocs must be at least 1, got %d", *procs)
	}
	rss, err := bench.ParseBytes(*maxRSS)
	if err != nil {
		return usagef("--embed-max-rss: %v", err)
	}
	var fmts []format.Format
	for _, name := range splitList(*formats) {
		f, ok := format.Lookup(name)
		if !ok {
			return usagef("unknown format %q: want one of %s", name, strings.Join(format.Names(), ", "))
		}
		fmts = append(fmts, f)
	}
	if len(fmts) == 0 {
		return usagef("--formats is empty")
	}
	vs := splitList(*variants)
	for _, v := range vs {
		if !slices.Contains(format.Variants, v) {
			return usagef("unknown variant %q: want one of %s", v, strings.Join(format.Variants, ", "))
		}
	}
	if len(vs) == 0 {
		return usagef("--variants is empty")
	}
	if err := bench.SetBenchtime(*benchtime); err != nil {
		return usageError{err.Error()}
	}
	plan := planOf(fmts, vs)
	if *only != "" {
		if plan, err = parseCells(*only); err != nil {
			return err
		}
	}
	loops, err := parseLoops(*fixed)
	if err != nil {
		return err
	}
	skip, err := parseChecked(*checked)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*workdir, 0o755); err != nil {
		return fmt.Errorf("create workdir: %w", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *lifeline {
		ctx = exitWithStdin(ctx, os.Stdin, lifelineGrace, os.Exit)
	}
	cfg := format.Config{
		Seed: *seed, Size: *size, Workdir: *workdir,
		Count: *count, Benchtime: *benchtime, Loops: loops, Checked: skip,
		EmbedMaxRSS: rss, EmbedTimeout: *timeout, EmbedCache: *embedCache,
	}
	recs := dataset.Generate(*size, *seed)
	// Every asset is written (and embed built) before the first sample, then
	// the cells are sampled in passes (format.RunPasses says why).
	var cells []*format.Cell
	for _, step := range plan {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted")
		}
		cells = append(cells, step.format.Cells(ctx, recs, cfg, step.variants)...)
	}
	// The samples run on --gomaxprocs Ps (the setup before them on all):
	// with one, a decode's collections run on its core, inside its time,
	// instead of on a second core that other processes may hold (its
	// samples then spread half as wide; the bulkload suite's go.py has the
	// measurements). The embed program measures with the same.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(*procs))
	emit := func(r bench.Result) error {
		r.Extra["gomaxprocs"] = runtime.GOMAXPROCS(0)
		// The runtime settings the samples ran with (the caller's: the
		// bulkload suite returns freed heap with MADV_FREE, go.py says why).
		r.Extra["godebug"] = os.Getenv("GODEBUG")
		line, err := json.Marshal(r)
		if err == nil {
			_, err = stdout.Write(append(line, '\n'))
		}
		if err != nil {
			return fmt.Errorf("write result: %w", err)
		}
		return nil
	}
	if err := format.RunPasses(ctx, cells, cfg, emit); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted")
		}
		return err
	}
	return nil
}

// formatPlan is one format's variants to measure, in order.
type formatPlan struct {
	format   format.Format
	variants []string
}

// planOf measures every variant of every format.
func planOf(fmts []format.Format, variants []string) []formatPlan {
	plan := make([]formatPlan, 0, len(fmts))
	for _, f := range fmts {
		plan = append(plan, formatPlan{f, variants})
	}
	return plan
}

// splitCell reads "format/variant", both known.
func splitCell(cell string) (format.Format, string, error) {
	name, variant, ok := strings.Cut(cell, "/")
	f, known := format.Lookup(name)
	if !ok || !known || !slices.Contains(format.Variants, variant) {
		return nil, "", usagef("bad cell %q: want format/variant, a format of %s and a variant of %s",
			cell, strings.Join(format.Names(), ", "), strings.Join(format.Variants, ", "))
	}
	return f, variant, nil
}

// parseCells reads --cells: only the cells named (a caller that wants a
// few variants of some formats need not measure the whole product), in
// their order, each format's variants together where it first appears.
func parseCells(s string) ([]formatPlan, error) {
	var plan []formatPlan
	at := map[string]int{}
	for _, cell := range splitList(s) {
		f, variant, err := splitCell(cell)
		if err != nil {
			return nil, err
		}
		i, seen := at[f.Name()]
		if !seen {
			i = len(plan)
			at[f.Name()] = i
			plan = append(plan, formatPlan{format: f})
		}
		if !slices.Contains(plan[i].variants, variant) {
			plan[i].variants = append(plan[i].variants, variant)
		}
	}
	if len(plan) == 0 {
		return nil, usagef("--cells is empty")
	}
	return plan, nil
}

// parseLoops reads --loops: format/variant=N, N at least 1.
func parseLoops(s string) (map[string]int, error) {
	loops := map[string]int{}
	for _, item := range splitList(s) {
		cell, count, _ := strings.Cut(item, "=")
		f, variant, err := splitCell(cell)
		if err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(count)
		if err != nil || n < 1 {
			return nil, usagef("--loops: bad count in %q: want format/variant=N, N at least 1", item)
		}
		loops[format.CellName(f.Name(), variant)] = n
	}
	return loops, nil
}

// parseChecked reads --checked: format/variant cells, each known.
func parseChecked(s string) (map[string]bool, error) {
	checked := map[string]bool{}
	for _, cell := range splitList(s) {
		f, variant, err := splitCell(cell)
		if err != nil {
			return nil, err
		}
		checked[format.CellName(f.Name(), variant)] = true
	}
	return checked, nil
}

// lifelineGrace is how long a cancelled bulkload may take to stop its
// compile and return before the process exits anyway.
const lifelineGrace = time.Second

// exitWithStdin returns a context cancelled when stdin reaches its end or
// fails. The parent holds the pipe's other end, so the kernel closes it
// when the parent dies, even by SIGKILL, while this program runs in a
// session of its own that the parent's process group signal never reaches.
// Cancelling stops the embed compile (runLimited kills its process tree);
// if the program has not returned after grace, exit ends it.
func exitWithStdin(ctx context.Context, stdin io.Reader, grace time.Duration, exit func(int)) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		io.Copy(io.Discard, stdin)
		cancel()
		time.Sleep(grace)
		exit(3)
	}()
	return ctx
}

func runInfo(args []string, stdout io.Writer) error {
	if err := parse(newFlags("info"), args); err != nil {
		return err
	}
	modules := map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			modules[m.Path] = m.Version
		}
	}
	line, err := json.Marshal(map[string]any{
		"go_version": runtime.Version(),
		"gomaxprocs": runtime.GOMAXPROCS(0),
		"goos":       runtime.GOOS,
		"goarch":     runtime.GOARCH,
		"formats":    format.Names(),
		"modules":    modules,
	})
	if err != nil {
		return err
	}
	_, err = stdout.Write(append(line, '\n'))
	return err
}

func runExport(args []string) error {
	fs := newFlags("export")
	name := fs.String("format", "", "a file format: every one but embed")
	seed := fs.Int64("seed", 100, "generator seed")
	size := fs.Int("size", 100000, "number of records")
	out := fs.String("out", "", "file to write")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkSize(*size); err != nil {
		return err
	}
	c, ok := format.LookupCodec(*name)
	if !ok {
		return usagef("export: unknown or non-file format %q: want one of %s", *name, strings.Join(fileFormats(), ", "))
	}
	if *out == "" {
		return usagef("export: --out is required")
	}
	_, err := format.WriteAsset(c, *out, dataset.Generate(*size, *seed))
	return err
}

// runDecode reads a file another program wrote in a file format (Python's
// codecs, for the cross-language check) and prints the canonical hash of
// the records decoded, which must be the dataset's.
func runDecode(args []string, stdout io.Writer) error {
	fs := newFlags("decode")
	name := fs.String("format", "", "a file format (export's)")
	in := fs.String("in", "", "file to decode")
	if err := parse(fs, args); err != nil {
		return err
	}
	c, ok := format.LookupCodec(*name)
	if !ok {
		return usagef("decode: unknown or non-file format %q: want one of %s", *name, strings.Join(fileFormats(), ", "))
	}
	if *in == "" {
		return usagef("decode: --in is required")
	}
	var recs dataset.Records
	if err := format.Load(c, *in, &recs); err != nil {
		return fmt.Errorf("decode %s as %s: %w", *in, *name, err)
	}
	h, err := dataset.Hash(recs)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, h)
	return err
}

// fileFormats are the formats whose assets are files (every one but embed).
func fileFormats() []string {
	var files []string
	for _, n := range format.Names() {
		if _, ok := format.LookupCodec(n); ok {
			files = append(files, n)
		}
	}
	return files
}

func runHash(args []string, stdout io.Writer) error {
	fs := newFlags("hash")
	seed := fs.Int64("seed", 100, "generator seed")
	size := fs.Int("size", 100000, "number of records")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkSize(*size); err != nil {
		return err
	}
	h, err := dataset.Hash(dataset.Generate(*size, *seed))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, h)
	return err
}
