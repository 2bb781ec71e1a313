package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The address check itself is tested in internal/loopback; here, that
// parseArgs refuses what it refuses as a usage error.
func TestLoopbackOnly(t *testing.T) {
	for _, bad := range []string{"0.0.0.0:27017", ":27017", "[::]:1", "127.0.0.1"} {
		var ue usageError
		if _, err := parseArgs([]string{"--listen", bad, "--dir", "d"}); !errors.As(err, &ue) {
			t.Errorf("--listen %q accepted (err %v)", bad, err)
		}
	}
}

func TestParseArgs(t *testing.T) {
	o, err := parseArgs([]string{"--listen", "127.0.0.1:0", "--dir", "data"})
	if err != nil {
		t.Fatal(err)
	}
	if o.listen != "127.0.0.1:0" || o.dir == "data" || o.logLevel.String() != "ERROR" {
		t.Errorf("%+v", o)
	}
	for _, args := range [][]string{
		{"--listen", "127.0.0.1:0"},
		{"--dir", "d", "--log-level", "loud"},
		{"--dir", "d", "extra"},
		{"--bogus"},
		{"--dir", "d", "--postgresql-url-file", "f"},
		{"--postgresql-url-file", "/nonexistent/url"},
	} {
		var ue usageError
		if _, err := parseArgs(args); !errors.As(err, &ue) {
			t.Errorf("%v: want a usage error, got %v", args, err)
		}
	}
}

func TestPostgreSQLURLFromFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "url")
	if err := os.WriteFile(file, []byte("postgresql://u:p@127.0.0.1:5/db\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parseArgs([]string{"--listen", "127.0.0.1:0", "--postgresql-url-file", file})
	if err != nil {
		t.Fatal(err)
	}
	if o.postgresqlURL != "postgresql://u:p@127.0.0.1:5/db" || o.dir != "" {
		t.Errorf("%+v", o)
	}
	if err := os.WriteFile(file, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var ue usageError
	if _, err := parseArgs([]string{"--postgresql-url-file", file}); !errors.As(err, &ue) {
		t.Errorf("empty URL file: want a usage error, got %v", err)
	}
}

func TestFerretDBGetsTheURLWithoutItsPassword(t *testing.T) {
	for raw, want := range map[string]string{
		"postgresql://u:s%2Fcret@127.0.0.1:5/db?plan_cache_mode=force_custom_plan": "postgresql://u@127.0.0.1:5/db?plan_cache_mode=force_custom_plan",
		"postgresql://u@127.0.0.1:5/db":                                            "postgresql://u@127.0.0.1:5/db",
		"postgresql://127.0.0.1:5/db":                                              "postgresql://127.0.0.1:5/db",
	} {
		if got := withoutPassword(raw); got != want {
			t.Errorf("withoutPassword(%q) = %q, want %q", raw, got, want)
		}
	}
}
