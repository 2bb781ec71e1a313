package format

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// The embed build cache: one directory per asset, named by the caller from
// its content (sources, Go version, size, seed), holding the program and
// buildRecord. A directory is complete or absent: it is assembled under a
// temporary name and renamed into place, so a killed run leaves no half
// entry that a later run would trust.

const (
	cachedBinary = "embedbench"
	cachedRecord = "build.json"
)

// buildRecord is what a cached build remembers of its own measurement.
type buildRecord struct {
	SourceBytes int64          `json:"source_bytes"`
	Costs       map[string]any `json:"costs"`
	Built       string         `json:"built"`
}

// loadCachedBuild returns the cached program and source size, and copies
// the recorded build costs into extra, with build_cached and built_at.
func loadCachedBuild(dir string, extra map[string]any) (string, int64, bool) {
	data, err := os.ReadFile(filepath.Join(dir, cachedRecord))
	if err != nil {
		return "", 0, false
	}
	var rec buildRecord
	if json.Unmarshal(data, &rec) != nil || rec.SourceBytes <= 0 {
		return "", 0, false
	}
	bin := filepath.Join(dir, cachedBinary)
	if st, err := os.Stat(bin); err != nil || st.Mode()&0o111 == 0 {
		return "", 0, false
	}
	for k, v := range rec.Costs {
		extra[k] = v
	}
	extra["build_cached"] = true
	extra["built_at"] = rec.Built
	return bin, rec.SourceBytes, true
}

// storeBuild copies a measured build into dir and returns the cached binary.
func storeBuild(dir, bin string, size int64, costs map[string]any) (string, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := copyFile(bin, filepath.Join(tmp, cachedBinary), 0o755); err != nil {
		return "", err
	}
	kept := map[string]any{}
	for k, v := range costs {
		kept[k] = v
	}
	rec, err := json.Marshal(buildRecord{SourceBytes: size, Costs: kept, Built: time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, cachedRecord), rec, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another run cached the same build first: theirs is as good.
		if _, statErr := os.Stat(filepath.Join(dir, cachedRecord)); statErr == nil {
			return filepath.Join(dir, cachedBinary), nil
		}
		return "", fmt.Errorf("move %s into place: %w", tmp, err)
	}
	return filepath.Join(dir, cachedBinary), nil
}

func copyFile(from, to string, mode os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
