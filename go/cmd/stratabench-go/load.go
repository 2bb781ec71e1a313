package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"stratabench.dev/go/internal/loadclient"
)

// runLoad is one load client (stratabench.load.go_clients runs one process per client):
//
//	stdin:  one line, the client's spec (JSON); later one line, "go" to start
//	stdout: {"ready": true} once its keys are loaded, then its report (JSON)
//
// A client that fails before the start prints its report (with "fatal") at
// once. stdin closing means the parent has gone or called the run off: the
// client exits at once, with status 3, whatever it was doing.
func runLoad(args []string, stdin io.Reader, stdout io.Writer, exit func(int)) error {
	if err := parse(newFlags("load"), args); err != nil {
		return err
	}
	in := bufio.NewReader(stdin)
	line, err := in.ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return usagef("load: no client spec on stdin")
	}
	var spec loadclient.Spec
	if err := json.Unmarshal(line, &spec); err != nil {
		return usagef("load: the client spec is not valid JSON: %v", err)
	}
	emit := func(v any) {
		data, err := json.Marshal(v)
		if err != nil {
			panic(err) // plain structs and maps always marshal
		}
		stdout.Write(append(data, '\n'))
	}
	gate := func() bool {
		emit(map[string]bool{"ready": true})
		word, _ := in.ReadString('\n')
		if strings.TrimSpace(word) != "go" {
			exit(3)
			return false
		}
		go func() { // the lifeline: the parent holds stdin's other end
			io.Copy(io.Discard, in)
			exit(3)
		}()
		return true
	}
	report := loadclient.Run(&spec, gate)
	emit(report)
	if report.Fatal != nil {
		fmt.Fprintf(os.Stderr, "stratabench-go load: client %d: %s\n", spec.Index, *report.Fatal)
	}
	return nil
}
