// Command stratabench-mongo is a MongoDB-compatible test server for
// stratabench: the embeddable FerretDB (v1.24.0), listening on a loopback
// address only, on one of FerretDB's two backends:
//
//	stratabench-mongo --listen 127.0.0.1:PORT --postgresql-url-file FILE [--log-level error]
//	stratabench-mongo --listen 127.0.0.1:PORT --dir DIR [--log-level error]
//
// The PostgreSQL backend is the one stratabench uses: FerretDB pushes an
// equality filter on any top-level field down to PostgreSQL there, while on
// SQLite it pushes down only a filter that is exactly {_id: value}, so every
// other query reads and decodes the whole collection in Go; before FerretDB
// starts, the PostgreSQL database gets a trigger that lets its indexes answer
// those filters (postgresql.go). FILE holds the
// PostgreSQL URL on its first line: a file, not a flag, so that the password
// in the URL never shows in the process list. --dir selects SQLite instead.
//
// On PostgreSQL, every client authenticates: FerretDB is given the URL
// without its password, so it serves only a client that authenticated
// (authMechanism=PLAIN) with a PostgreSQL user name and password that
// PostgreSQL accepts; one that gave none is refused by PostgreSQL
// (withoutPassword in postgresql.go). The SQLite backend has no accounts.
//
// When it accepts connections it prints exactly one line on stdout,
// "ready mongodb://127.0.0.1:PORT/" (PORT 0 picks a free port, and the line
// shows the one chosen). SIGTERM or SIGINT shuts it down cleanly: it stops
// listening, waits for open connections to end and closes the backend.
// Bad flags exit with code 2 and a one-line message on stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"

	"stratabench.dev/go/internal/loopback"
)

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err == nil {
		return
	}
	fmt.Fprintf(os.Stderr, "stratabench-mongo: %s\n", strings.Join(strings.Fields(err.Error()), " "))
	var ue usageError
	if errors.As(err, &ue) {
		os.Exit(2)
	}
	os.Exit(1)
}

type options struct {
	listen        string // a loopback host:port
	dir           string // absolute SQLite data directory, or ""
	postgresqlURL string // read from --postgresql-url-file, or ""
	logLevel      slog.Level
}

func parseArgs(args []string) (options, error) {
	fs := flag.NewFlagSet("stratabench-mongo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.String("listen", "127.0.0.1:27017", "loopback address to listen on (host:port; port 0 picks a free one)")
	dir := fs.String("dir", "", "SQLite data directory, created if missing (the SQLite backend)")
	pgFile := fs.String("postgresql-url-file", "", "file whose first line is a PostgreSQL URL (the PostgreSQL backend)")
	level := fs.String("log-level", "error", "FerretDB log level on stderr: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return options{}, usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return options{}, usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	var o options
	var err error
	if o.listen, err = loopback.Addr(*listen); err != nil {
		return options{}, usageError{fmt.Sprintf("--listen %q: %v", *listen, err)}
	}
	switch {
	case (*dir == "") == (*pgFile == ""):
		return options{}, usageError{"give one of --postgresql-url-file (PostgreSQL backend) or --dir (SQLite backend)"}
	case *pgFile != "":
		text, err := os.ReadFile(*pgFile)
		if err != nil {
			return options{}, usageError{fmt.Sprintf("--postgresql-url-file: %v", err)}
		}
		o.postgresqlURL = strings.TrimSpace(strings.SplitN(string(text), "\n", 2)[0])
		if o.postgresqlURL == "" {
			return options{}, usageError{fmt.Sprintf("--postgresql-url-file %q: the first line is empty", *pgFile)}
		}
	default:
		if o.dir, err = filepath.Abs(*dir); err != nil {
			return options{}, usageError{fmt.Sprintf("--dir %q: %v", *dir, err)}
		}
	}
	if err := o.logLevel.UnmarshalText([]byte(*level)); err != nil {
		return options{}, usageError{fmt.Sprintf("--log-level %q: want debug, info, warn or error", *level)}
	}
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseArgs(args)
	if err != nil {
		return err
	}
	config := &ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: o.listen},
		Logger:   slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: o.logLevel})),
	}
	backend := "PostgreSQL" // never the URL: it holds the password
	if o.postgresqlURL != "" {
		pgURL, err := preparePostgreSQL(context.Background(), o.postgresqlURL)
		if err != nil {
			return err
		}
		config.Handler, config.PostgreSQLURL = "postgresql", withoutPassword(pgURL)
	} else {
		if err := os.MkdirAll(o.dir, 0o755); err != nil {
			return fmt.Errorf("create --dir: %w", err)
		}
		config.Handler = "sqlite"
		config.SQLiteURL = (&url.URL{Scheme: "file", Path: filepath.ToSlash(o.dir) + "/"}).String()
		backend = config.SQLiteURL
	}
	f, err := ferretdb.New(config)
	if err != nil {
		return fmt.Errorf("start FerretDB on %s with %s: %w", o.listen, backend, err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()

	// ferretdb.New has bound and is listening on the socket, so clients can
	// connect from here on; MongoDBURI holds the port actually chosen.
	if _, err := fmt.Fprintf(stdout, "ready %s\n", f.MongoDBURI()); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		// A second signal kills the process at once.
		stop()
		return <-done
	case err := <-done:
		return err
	}
}
