package main

import (
	"errors"
	"testing"
)

func TestLoopbackOnly(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:27017": "127.0.0.1:27017",
		"localhost:0":     "127.0.0.1:0",
		"127.1.2.3:5":     "127.1.2.3:5",
		"[::1]:27017":     "[::1]:27017",
	} {
		if got, err := loopback(in); err != nil || got != want {
			t.Errorf("loopback(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"0.0.0.0:27017", ":27017", "10.0.0.1:1", "example.com:1", "[::]:1", "127.0.0.1"} {
		var ue usageError
		if _, err := loopback(bad); !errors.As(err, &ue) {
			t.Errorf("loopback(%q) accepted (err %v)", bad, err)
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
	} {
		var ue usageError
		if _, err := parseArgs(args); !errors.As(err, &ue) {
			t.Errorf("%v: want a usage error, got %v", args, err)
		}
	}
}
