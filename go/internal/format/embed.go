package format

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"stratabench.dev/go/internal/bench"
	"stratabench.dev/go/internal/dataset"
)

// embedFormat compiles the list into a program as Go source (the seed's
// "embed" variant). Loading is returning a package variable (~0.3 ns); the
// real costs are elsewhere and are reported as extra metrics:
//
//   - compile_ns, compile_peak_rss_bytes: the measured `go build`, with the
//     standard library already in the build cache, as a developer rebuilding
//     the asset would see it;
//   - binary_size_bytes;
//   - init_ns, init_alloc_bytes, init_allocs: the data package's init, from
//     GODEBUG=inittrace=1 (the times are parsed there).
//
// The program is built once per run in its own module under the work
// directory, with a private build cache (embed-gocache) that an unmeasured
// build of a one-record program fills with the standard library first.
// With Config.EmbedCache the built program and its measured costs are kept
// there (embed_cache.go) and later runs reuse both, reporting build_cached.
// warm and fresh are the same operation here (there is no destination to
// empty); each sample of each requested variant runs the built program
// once (its init costs are the last run's), and every line repeats the one
// build's costs.
type embedFormat struct{}

func init() { Register(10, embedFormat{}) }

func (embedFormat) Name() string { return "embed" }

func (e embedFormat) Cells(ctx context.Context, recs dataset.Records, cfg Config, variants []string) []*Cell {
	extra := map[string]any{}
	bin, size, err := e.build(ctx, recs, cfg, extra)
	var cells []*Cell
	for _, v := range variants {
		if v == Encode {
			continue // its encode is the build, whose costs every load row reports
		}
		c := &Cell{Result: bench.NewResult(e.Name(), v)}
		for k, val := range extra {
			c.Result.Extra[k] = val
		}
		if size > 0 {
			c.Result.SizeBytes = &size
		}
		switch {
		case err != nil:
			c.Result.Fail(err)
		case v != Warm && v != Fresh:
			c.Result.Fail(fmt.Errorf("unknown variant %q: want warm or fresh", v))
		default:
			res := &c.Result
			c.sample = func(ctx context.Context, benchtime string, _ bool) (bench.Sample, error) {
				return e.measure(ctx, bin, cfg, benchtime, res)
			}
		}
		cells = append(cells, c)
	}
	return cells
}

func goTool() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	if root := os.Getenv("GOROOT"); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errNoGo
}

func (embedFormat) goBuild(ctx context.Context, goBin, dir, cache string, timeout time.Duration, maxRSS int64) limitedRun {
	cmd := exec.Command(goBin, "build", "-o", "embedbench", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GOCACHE="+cache,
		"GOWORK=off",
		"GOTOOLCHAIN=local",
		"GO111MODULE=on",
		"CGO_ENABLED=0",
		// Our own flags only: the work directory may sit inside a VCS
		// checkout, whose status go build would otherwise try to stamp.
		"GOFLAGS=-mod=mod -buildvcs=false",
	)
	return runLimited(ctx, cmd, timeout, maxRSS)
}

// build returns the program's binary and source size: the cached build's
// when there is one, else a new one (cached if asked). It fills extra with
// the build's measured costs, also when it fails.
func (e embedFormat) build(ctx context.Context, recs dataset.Records, cfg Config, extra map[string]any) (string, int64, error) {
	if cfg.EmbedCache == "" {
		return e.compile(ctx, recs, cfg, extra)
	}
	if bin, size, ok := loadCachedBuild(cfg.EmbedCache, extra); ok {
		return bin, size, nil
	}
	bin, size, err := e.compile(ctx, recs, cfg, extra)
	if err == nil {
		if cached, err := storeBuild(cfg.EmbedCache, bin, size, extra); err != nil {
			fmt.Fprintf(os.Stderr, "stratabench-go: embed: build not cached: %v\n", err)
		} else {
			bin = cached
		}
	}
	extra["build_cached"] = false
	return bin, size, err
}

// compile writes and compiles the program, measuring the build.
func (e embedFormat) compile(ctx context.Context, recs dataset.Records, cfg Config, extra map[string]any) (string, int64, error) {
	goBin, err := goTool()
	if err != nil {
		return "", 0, err
	}
	cache := filepath.Join(cfg.Workdir, "embed-gocache")

	stub := filepath.Join(cfg.Workdir, "embed-stub")
	if _, err := writeEmbedSource(stub, recs[:1], "stub"); err != nil {
		return "", 0, fmt.Errorf("write embed stub: %w", err)
	}
	// The memory limit is about compiling the list, not the standard
	// library, so only the time limit applies to the warm-up.
	warm := e.goBuild(ctx, goBin, stub, cache, cfg.EmbedTimeout, 0)
	extra["cache_warmup_ns"] = warm.Elapsed.Nanoseconds()
	if warm.Err != nil {
		return "", 0, fmt.Errorf("embed warm-up build (one record) failed: %w", warm.Err)
	}

	dir := filepath.Join(cfg.Workdir, fmt.Sprintf("embed-%d-%d", cfg.Seed, cfg.Size))
	nonce := strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(os.Getpid())
	size, err := writeEmbedSource(dir, recs, nonce)
	if err != nil {
		return "", 0, fmt.Errorf("write embed source: %w", err)
	}
	run := e.goBuild(ctx, goBin, dir, cache, cfg.EmbedTimeout, cfg.EmbedMaxRSS)
	extra["compile_ns"] = run.Elapsed.Nanoseconds()
	extra["compile_peak_rss_bytes"] = run.PeakRSS
	if run.Err != nil {
		return "", size, fmt.Errorf("embed compile failed: %w", run.Err)
	}
	bin := filepath.Join(dir, "embedbench")
	st, err := os.Stat(bin)
	if err != nil {
		return "", size, fmt.Errorf("embed compile left no binary: %w", err)
	}
	extra["binary_size_bytes"] = st.Size()
	return bin, size, nil
}

// An inittrace line: "init stratabenchembed/data @0.52 ms, 9.8 ms clock,
// 12800032 bytes, 200003 allocs".
var initTraceRE = regexp.MustCompile(`(?m)^init ` + regexp.QuoteMeta(embedDataPkg) +
	` @\S+ ms, ([0-9.]+) ms clock, ([0-9]+) bytes, ([0-9]+) allocs`)

// measure runs the built program for one sample; it reports the hash of
// the list it returned and its data package's init costs, which res takes.
func (embedFormat) measure(ctx context.Context, bin string, cfg Config, benchtime string, res *bench.Result) (bench.Sample, error) {
	cmd := exec.Command(bin, "-test.benchtime="+benchtime, "-count", "1")
	godebug := "inittrace=1"
	if g := os.Getenv("GODEBUG"); g != "" {
		godebug = g + "," + godebug
	}
	// It runs on the Ps this program's samples run on (stratabench-go's --gomaxprocs).
	cmd.Env = append(os.Environ(), "GODEBUG="+godebug, fmt.Sprintf("GOMAXPROCS=%d", runtime.GOMAXPROCS(0)))
	run := runLimited(ctx, cmd, cfg.EmbedTimeout, 0)
	if run.Err != nil {
		return bench.Sample{}, fmt.Errorf("embed program failed: %w", run.Err)
	}
	var out struct {
		Loops           int       `json:"loops"`
		WallNs          []float64 `json:"wall_ns"`
		AllocTotalBytes []int64   `json:"alloc_total_bytes"`
		AllocsTotal     []int64   `json:"allocs_total"`
		Records         int       `json:"records"`
		Hash            string    `json:"hash"`
	}
	if err := json.Unmarshal(run.Stdout, &out); err != nil {
		return bench.Sample{}, fmt.Errorf("embed program printed no result: %v: %s", err, tail(run.Stdout, 200))
	}
	if len(out.WallNs) != 1 || len(out.AllocTotalBytes) != 1 || len(out.AllocsTotal) != 1 {
		return bench.Sample{}, fmt.Errorf("embed program printed %d samples for -count 1: %s", len(out.WallNs), tail(run.Stdout, 200))
	}
	if m := initTraceRE.FindSubmatch(run.Stderr); m != nil {
		ms, _ := strconv.ParseFloat(string(m[1]), 64)
		res.Extra["init_ns"] = int64(ms * 1e6)
		res.Extra["init_alloc_bytes"], _ = strconv.ParseInt(string(m[2]), 10, 64)
		res.Extra["init_allocs"], _ = strconv.ParseInt(string(m[3]), 10, 64)
	} else {
		res.Extra["init_ns"] = nil
		fmt.Fprintf(os.Stderr, "stratabench-go: embed: no inittrace line for %s in the program's stderr: %s\n",
			embedDataPkg, strings.TrimSpace(tail(run.Stderr, 200)))
	}
	res.Hash = &out.Hash
	res.Extra["records"] = out.Records
	return bench.Sample{WallNs: out.WallNs[0], AllocTotalBytes: out.AllocTotalBytes[0], AllocsTotal: out.AllocsTotal[0],
		Loops: out.Loops}, nil
}
