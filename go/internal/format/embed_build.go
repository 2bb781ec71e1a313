package format

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// limitedRun is the outcome of a command run under time and memory limits.
type limitedRun struct {
	Elapsed time.Duration
	// PeakRSS is the largest resident set of any single process of the
	// command's tree: the wait4 rusage maxrss (which covers descendants the
	// command waited for, such as go build's compile and link) or, if
	// larger, the peak seen by polling /proc.
	PeakRSS int64
	Stdout  []byte
	Stderr  []byte
	// Err is non-nil if the command failed or a limit stopped it.
	Err error
}

// runLimited runs cmd and kills it and all its descendants if it runs
// longer than timeout or any process among them grows past maxRSS bytes
// (0 disables either limit).
//
// The command stays in our process group on purpose: whoever runs
// stratabench-go can stop everything it started by signalling the group.
func runLimited(ctx context.Context, cmd *exec.Cmd, timeout time.Duration, maxRSS int64) limitedRun {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// If stratabench-go dies, the go command must not go on alone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out limitedRun
	start := time.Now()
	if err := cmd.Start(); err != nil {
		out.Err = err
		return out
	}
	root := cmd.Process.Pid
	kill := func() {
		// Snapshot first: once the root dies its children are reparented
		// and can no longer be found from it.
		_, tree := processTree(root)
		for _, pid := range tree {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}

	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	overLimit := func() error {
		return fmt.Errorf("a process used %d MiB resident memory, over the limit of %d MiB", out.PeakRSS>>20, maxRSS>>20)
	}
	var limitErr, waitErr error
loop:
	for {
		select {
		case waitErr = <-done:
			break loop
		case <-ctx.Done():
			if limitErr == nil {
				limitErr = ctx.Err()
			}
			kill()
		case <-deadline:
			if limitErr == nil {
				limitErr = fmt.Errorf("timed out after %s (limit %s)", time.Since(start).Round(time.Millisecond), timeout)
			}
			kill()
		case <-tick.C:
			if rss, _ := processTree(root); rss > out.PeakRSS {
				out.PeakRSS = rss
			}
			if maxRSS > 0 && out.PeakRSS > maxRSS && limitErr == nil {
				limitErr = overLimit()
				kill()
			}
		}
	}
	out.Elapsed = time.Since(start)
	if st := cmd.ProcessState; st != nil {
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok && ru.Maxrss*1024 > out.PeakRSS {
			out.PeakRSS = ru.Maxrss * 1024 // Linux reports kilobytes
		}
	}
	// A process may have peaked between two polls.
	if maxRSS > 0 && out.PeakRSS > maxRSS && limitErr == nil {
		limitErr = overLimit()
	}
	out.Stdout, out.Stderr = stdout.Bytes(), stderr.Bytes()
	switch {
	case limitErr != nil:
		out.Err = limitErr
	case waitErr != nil:
		out.Err = fmt.Errorf("%v: %s", waitErr, tail(out.Stderr, 300))
	}
	return out
}

// processTree returns root and its live descendants, root first, and the
// largest current resident set among them in bytes.
func processTree(root int) (int64, []int) {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name (field 2) is in parentheses and may hold
		// spaces; the fields after the last ')' start: state ppid.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	tree := []int{root}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i]]...)
	}
	var peak int64
	page := int64(os.Getpagesize())
	for _, pid := range tree {
		statm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
		if err != nil {
			continue
		}
		sf := strings.Fields(string(statm))
		if len(sf) < 2 {
			continue
		}
		if pages, err := strconv.ParseInt(sf[1], 10, 64); err == nil && pages*page > peak {
			peak = pages * page
		}
	}
	return peak, tree
}

// tail returns the last n bytes of b on one line.
func tail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return strings.Join(strings.Fields(s), " ")
}

var errNoGo = errors.New("Go toolchain not found on PATH: the embed cell compiles Go source at run time")
