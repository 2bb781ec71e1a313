package format

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"stratabench.dev/go/internal/dataset"
)

func TestAppendEmbedRecord(t *testing.T) {
	got := string(appendEmbedRecord(nil, dataset.Generate(1, 100)[0]))
	want := "\t{Bool: true, Int: 1816137624592625432, Float: -2.4122147266495095, " +
		`String: "384203C438D4E94BF399CBD88BBCAF", Time: t("2000-08-02T03:28:02.028350735Z")},` + "\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// One work directory for both embed tests, so that the standard library is
// compiled into its build cache once.
func embedConfig(t *testing.T) Config {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not on PATH")
	}
	return Config{Seed: 100, Size: 10, Workdir: embedDir, Count: 2, Benchtime: "1000x", EmbedTimeout: 5 * time.Minute}
}

var embedDir string

func TestEmbed(t *testing.T) {
	embedDir = t.TempDir()
	cfg := embedConfig(t)
	f, _ := Lookup("embed")
	res := runCells(t, f, dataset.Generate(10, 100), cfg, Warm, Fresh)
	for _, r := range res {
		if r.Error != nil {
			t.Fatalf("embed/%s failed: %s", r.Variant, *r.Error)
		}
		if r.Hash == nil || *r.Hash != hash10 {
			t.Errorf("embed/%s: hash %v, want %s", r.Variant, r.Hash, hash10)
		}
		if len(r.Samples.WallNs) != 2 || r.Loops != 1000 {
			t.Errorf("embed/%s: %d samples, %d loops", r.Variant, len(r.Samples.WallNs), r.Loops)
		}
		for _, k := range []string{"compile_ns", "compile_peak_rss_bytes", "binary_size_bytes", "init_ns"} {
			if v, ok := r.Extra[k]; !ok || v == nil {
				t.Errorf("embed/%s: extra %s missing", r.Variant, k)
			}
		}
		if rss := r.Extra["compile_peak_rss_bytes"].(int64); rss < 1<<20 {
			t.Errorf("compile peak RSS %d B is implausibly small", rss)
		}
	}

	t.Run("over memory limit", func(t *testing.T) {
		cfg.EmbedMaxRSS = 1 << 20
		for _, r := range runCells(t, f, dataset.Generate(10, 100), cfg, Warm) {
			if r.Error == nil || !strings.Contains(*r.Error, "limit") {
				t.Fatalf("want a failure over the memory limit, got %+v", r)
			}
			if _, ok := r.Extra["compile_ns"]; !ok {
				t.Error("a failed compile must still report its measured cost")
			}
			if len(r.Samples.WallNs) != 0 {
				t.Error("a failed cell has no samples")
			}
		}
	})
}

func TestRunLimitedTimeout(t *testing.T) {
	start := time.Now()
	run := runLimited(context.Background(), exec.Command("sleep", "10"), 100*time.Millisecond, 0)
	if run.Err == nil || !strings.Contains(run.Err.Error(), "timed out") {
		t.Fatalf("want a timeout, got %v", run.Err)
	}
	if time.Since(start) > 5*time.Second {
		t.Error("the timed-out command was not killed")
	}
}

func TestRunLimitedKillsDescendants(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & echo $!; wait")
	run := runLimited(context.Background(), cmd, 300*time.Millisecond, 0)
	if run.Err == nil {
		t.Fatal("want a timeout")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(run.Stdout)))
	if err != nil {
		t.Fatalf("no pid printed: %q", run.Stdout)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return // gone, or a zombie waiting for its new parent
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d survived: %s", pid, stat)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
