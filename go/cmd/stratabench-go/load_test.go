package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestLoadRefusesAMissingOrBadSpec(t *testing.T) {
	for _, stdin := range []string{"", "{not json\n"} {
		err := runLoad(nil, strings.NewReader(stdin), &bytes.Buffer{}, func(int) { t.Fatal("exit") })
		var ue usageError
		if !errors.As(err, &ue) {
			t.Fatalf("stdin %q: err %v, want a usage error", stdin, err)
		}
	}
}

func TestLoadReportsAClientThatCannotStartWithoutWaitingAtTheGate(t *testing.T) {
	spec := `{"index":3,"clients":4,"warmup_s":0,"duration_s":1,"intervals":2,"max_consecutive_errors":5,` +
		`"store":{"url":"ftp://nowhere"},"payloads":["eA=="],"reads":"AQ==","keys":"AAAAAA=="}` + "\n"
	var out bytes.Buffer
	if err := runLoad(nil, strings.NewReader(spec), &out, func(int) { t.Fatal("exit") }); err != nil {
		t.Fatal(err)
	}
	var report map[string]any
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatalf("stdout %q: %v", out.String(), err)
	}
	if report["index"].(float64) != 3 || !strings.HasPrefix(report["fatal"].(string), "Go clients cannot load ftp://") {
		t.Fatalf("report %v", report)
	}
	if len(report["interval_histograms"].([]any)) != 2 {
		t.Fatalf("interval histograms: %v", report["interval_histograms"])
	}
}
