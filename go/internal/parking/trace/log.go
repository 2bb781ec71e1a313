// Package trace records what a parking server does: a log file of every
// HTTP message and every SQL statement with its parameters and result rows
// (docs/studies/parking.md §1, "logging on"), and counts of SQL statements by kind, taken by
// a database/sql driver wrapper so that both servers are counted alike.
package trace

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// Log writes one line per record to a file, each with one write call (as
// Python's logging.FileHandler flushes every record). A nil *Log is off.
type Log struct {
	mu   sync.Mutex
	file *os.File
}

// OpenLog appends to path; an empty path turns logging off (nil Log).
func OpenLog(path string) (*Log, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log file: %w", err)
	}
	return &Log{file: f}, nil
}

// On tells whether records are written; callers skip formatting when off.
func (l *Log) On() bool { return l != nil }

// Printf writes one record: a timestamp, a kind and the formatted text.
func (l *Log) Printf(kind, format string, args ...any) {
	if l == nil {
		return
	}
	line := fmt.Sprintf("%s %s %s\n", time.Now().Format("2006-01-02 15:04:05.000"), kind, fmt.Sprintf(format, args...))
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.file.WriteString(line) // a failed log write must not fail the call
}

// Close closes the file.
func (l *Log) Close() error {
	if l == nil {
		return nil
	}
	return l.file.Close()
}
