package format

import (
	"context"
	"fmt"

	"stratabench.dev/go/internal/bench"
)

// Cell is one format/variant of a run, measured one sample a pass.
type Cell struct {
	// Result is the cell's line: its identity and what its set-up found
	// (size, extras), already failed when it cannot be measured; its
	// samples, loop count and hash join it as they are taken.
	Result bench.Result
	// sample takes one sample at benchtime. The cell keeps nothing between
	// two samples (a warm destination, an encode buffer), so another cell's
	// sample runs with the heap it would have alone; last marks the cell's
	// final sample, which also checks what the operation produced
	// (Result.Hash) and fills what is known only then.
	sample func(ctx context.Context, benchtime string, last bool) (bench.Sample, error)
}

// benchtime is the cell's next sample's: after its first sample the loop
// count that one found, so only a process's first sample of a cell ramps up
// (testing.Benchmark's ramp costs about a sample again), else cfg's.
func (c *Cell) benchtime(cfg Config) string {
	if c.Result.Loops > 0 {
		return fmt.Sprintf("%dx", c.Result.Loops)
	}
	return cfg.BenchtimeOf(c.Result.Format, c.Result.Variant)
}

// RunPasses takes cfg.Count samples of every cell in passes: a pass takes
// one sample of every cell still measuring, in the order given. A cell's
// samples are then a pass apart (a second or more in a run of dozens of
// cells), not back to back, so a slow window of the machine, a fraction of
// a second to seconds long, slows one of them rather than all, and the
// median of a process's samples leaves it out. A cell's line goes to emit
// after its last sample; a failed cell's at once, and it takes no more
// samples. An error of emit stops the passes and is returned, as is ctx's
// when it ends first.
func RunPasses(ctx context.Context, cells []*Cell, cfg Config, emit func(bench.Result) error) error {
	live := make([]*Cell, 0, len(cells))
	for _, c := range cells {
		if c.Result.Error == nil {
			live = append(live, c)
		} else if err := emit(c.Result); err != nil {
			return err
		}
	}
	for pass := 0; pass < cfg.Count && len(live) > 0; pass++ {
		last := pass == cfg.Count-1
		kept := live[:0]
		for _, c := range live {
			if err := ctx.Err(); err != nil {
				return err
			}
			one, err := c.sample(ctx, c.benchtime(cfg), last)
			if err != nil {
				c.Result.Fail(err)
			} else {
				c.Result.Samples.Add(one)
				c.Result.Loops = one.Loops
			}
			if err == nil && !last {
				kept = append(kept, c)
			} else if err := emit(c.Result); err != nil {
				return err
			}
		}
		live = kept
	}
	return nil
}
