package loadclient

import (
	"encoding/json"
	"os"
	"runtime"
)

// spill appends each finished interval of the window to the client's spill
// file the moment it is over, one JSON line each, so that a kill -9 of the
// load leaves the seconds measured for the next command to keep: the lines
// of src/stratabench/load/spill.py, field for field. A file that cannot be
// written is given up, silently: losing the spill never stops a measurement.
type spill struct {
	file *os.File
	done int // intervals written
}

func openSpill(path string) *spill {
	if path == "" {
		return nil
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil
	}
	return &spill{file: file}
}

// endOf is the first offset into the window (ns) past interval i: the slot rule of answered.
func (r *run) endOf(i int) int64 {
	n := int64(len(r.intervals))
	return (int64(i+1)*r.windowNs + n - 1) / n
}

// spillUntil writes every interval over by offset (ns into the window) not written yet. It is called before
// the request at offset is sent: every request of an earlier interval is recorded by then, offsets only grow.
func (r *run) spillUntil(offset int64) {
	s := r.spill
	for s != nil && s.file != nil && s.done < len(r.intervals) && offset >= r.endOf(s.done) {
		host, _ := os.Hostname()
		line, err := json.Marshal(map[string]any{
			"index": r.spec.Index, "interval": s.done, "histogram": Encode(r.intervals[s.done]),
			"kinds": r.kinds, "errors": r.errors, "first_error": optional(r.firstError),
			"failed_checks": r.requests.Failures.Count, "first_failed_check": optional(r.requests.Failures.First),
			"busy_cpu_s": float64(max(0, processCPUNs()-r.cpuStart-r.spunNs)) / nsPerS,
			"wall_s":     float64(r.now()-r.started) / nsPerS, "host_busy": busyShare(r.hostStart, readHostTimes()),
			"host": host, "pid": os.Getpid(), "host_cpus": runtime.NumCPU(),
		})
		if err == nil {
			_, err = s.file.Write(append(line, '\n'))
		}
		if err != nil {
			s.close()
			return
		}
		s.done++
	}
	if s != nil && s.done < len(r.intervals) {
		r.spillAt = r.endOf(s.done)
	} else {
		r.spillAt = 1<<63 - 1
	}
}

func (s *spill) close() {
	if s != nil && s.file != nil {
		s.file.Close()
		s.file = nil
	}
}
