package format

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEmbedCacheMissThenHit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache", "key")
	extra := map[string]any{}
	if _, _, ok := loadCachedBuild(dir, extra); ok {
		t.Fatal("an empty cache hit")
	}
	bin := filepath.Join(t.TempDir(), "embedbench")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	costs := map[string]any{"compile_ns": 123, "compile_peak_rss_bytes": 456}
	cached, err := storeBuild(dir, bin, 789, costs)
	if err != nil {
		t.Fatal(err)
	}
	if cached != filepath.Join(dir, cachedBinary) {
		t.Fatalf("cached binary at %s", cached)
	}
	got, size, ok := loadCachedBuild(dir, extra)
	if !ok || got != cached || size != 789 {
		t.Fatalf("hit = %v %s %d", ok, got, size)
	}
	// JSON numbers come back as float64: the recorded costs, not new ones.
	if extra["compile_ns"] != float64(123) || extra["build_cached"] != true || extra["built_at"] == "" {
		t.Fatalf("extra = %v", extra)
	}
}

func TestEmbedCacheIgnoresAnIncompleteEntry(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, cachedRecord), []byte(`{"source_bytes": 5, "costs": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := loadCachedBuild(dir, map[string]any{}); ok {
		t.Fatal("an entry without its binary hit")
	}
}

func TestEmbedCacheKeepsTheFirstOfTwoRacingBuilds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "key")
	bin := filepath.Join(t.TempDir(), "embedbench")
	if err := os.WriteFile(bin, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := storeBuild(dir, bin, 1, map[string]any{"compile_ns": 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := storeBuild(dir, bin, 2, map[string]any{"compile_ns": 2}); err != nil {
		t.Fatal(err)
	}
	extra := map[string]any{}
	if _, size, ok := loadCachedBuild(dir, extra); !ok || size != 1 || extra["compile_ns"] != float64(1) {
		t.Fatalf("kept %d %v", size, extra)
	}
	leftovers, _ := filepath.Glob(dir + ".tmp-*")
	if len(leftovers) != 0 {
		t.Fatalf("temporary directories left: %v", leftovers)
	}
}
