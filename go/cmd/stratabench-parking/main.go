// Command stratabench-parking is the Go side of the parking study
// (docs/studies/parking.md): the car-parking OLTP service of §3–§9 over HTTP, in two
// implementations that share the business logic and differ in their data
// layer.
//
//		stratabench-parking -impl orm|sql -db sqlite|postgresql|mysql -dsn DSN
//		                    [-listen 127.0.0.1:0] [-log FILE]
//
//	  - -impl orm: GORM, mapped structs, SELECT … FOR UPDATE through
//	    clause.Locking, rows saved whole (go-orm);
//	    -impl sql: database/sql, hand-written statements, fewer of them
//	    (go-sql). Both run one transaction per call.
//	  - -db and -dsn: the database, which must exist. DSNs: sqlite a file
//	    path (or sqlite:///path, file: URI); postgresql a postgresql:// URL
//	    or pgx key=value string; mysql (MariaDB) a mysql://user:pass@host:port/db
//	    URL or a go-sql-driver DSN. On start the server creates the tables
//	    that are absent (DDL per database in internal/parking/database) and,
//	    when t_product is empty, inserts the two seed lots (1333 at 51/h with
//	    8000 places, 15001 at 60/h with 5000).
//	  - -listen: a loopback host:port; port 0 picks a free one.
//	  - -log FILE: logging on, appending every HTTP request and response and
//	    every SQL statement with its parameters and result rows to FILE, one
//	    line each; empty (the default) is logging off.
//
// When it accepts calls it prints exactly one line on stdout,
// "listening 127.0.0.1:PORT". It exits cleanly (finishing the call in
// progress, closing the database and the log) when its standard input
// reaches end of file — so start it with a pipe on stdin and it never
// outlives its parent — or on SIGTERM or SIGINT. Bad flags exit with code 2
// and a one-line message on stderr; a failure to start, with code 1.
//
// Statement counts: every SQL statement that reaches the database is
// counted by kind in the server's process (a database/sql driver wrapper,
// so both implementations are counted alike; start-up statements are not
// counted). As the Python servers do, a line "statements" on stdin is
// answered on stdout by one line "statements {JSON}" with the kinds
// SELECT, SELECT FOR UPDATE, UPDATE, INSERT, DELETE, COMMIT, ROLLBACK and
// OTHER. Over HTTP, GET /_stats answers a JSON object of counts,
//
//	{"BEGIN": n, "COMMIT": n, "DELETE": n, "INSERT": n, "OTHER": n,
//	 "ROLLBACK": n, "SELECT": n, "SELECT FOR UPDATE": n, "UPDATE": n}
//
// and POST /_stats/reset answers the same object and sets the counts to
// zero. On SQLite there is no FOR UPDATE (the database locks the whole
// file), so locking reads count as SELECT.
//
// Transport notes: HTTP/1.1 framing with "Connection: close" on every
// answer (the reference speaks HTTP/1.0; both close the connection after
// one call); methods other than GET answer 501.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"stratabench.dev/go/internal/loopback"
	"stratabench.dev/go/internal/parking/database"
	"stratabench.dev/go/internal/parking/gormstore"
	"stratabench.dev/go/internal/parking/httpapi"
	"stratabench.dev/go/internal/parking/service"
	"stratabench.dev/go/internal/parking/sqlstore"
	"stratabench.dev/go/internal/parking/trace"
)

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout)
	if err == nil {
		return
	}
	fmt.Fprintf(os.Stderr, "stratabench-parking: %s\n", strings.Join(strings.Fields(err.Error()), " "))
	var ue usageError
	if errors.As(err, &ue) {
		os.Exit(2)
	}
	os.Exit(1)
}

type options struct {
	impl    string
	dialect database.Dialect
	dsn     string
	listen  string
	logPath string
}

func parseArgs(args []string) (options, error) {
	fs := flag.NewFlagSet("stratabench-parking", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	impl := fs.String("impl", "", "orm (GORM) or sql (database/sql)")
	db := fs.String("db", "", "sqlite, postgresql or mysql")
	dsn := fs.String("dsn", "", "the database to use (it must exist)")
	listen := fs.String("listen", "127.0.0.1:0", "loopback host:port; port 0 picks a free one")
	logPath := fs.String("log", "", "log file (empty: logging off)")
	if err := fs.Parse(args); err != nil {
		return options{}, usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return options{}, usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	o := options{impl: *impl, dsn: *dsn, logPath: *logPath}
	if o.impl != "orm" && o.impl != "sql" {
		return options{}, usageError{fmt.Sprintf("-impl %q: want orm or sql", o.impl)}
	}
	var err error
	if o.dialect, err = database.ParseDialect(*db); err != nil {
		return options{}, usageError{"-db: " + err.Error()}
	}
	if o.dsn == "" {
		return options{}, usageError{"-dsn is required: the database to use"}
	}
	if o.listen, err = loopback.Addr(*listen); err != nil {
		return options{}, usageError{fmt.Sprintf("-listen %q: %v", *listen, err)}
	}
	return o, nil
}

// run serves until ctx ends or stdin reaches end of file.
func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	o, err := parseArgs(args)
	if err != nil {
		return err
	}
	log, err := trace.OpenLog(o.logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	stats := &trace.Stats{}
	db, err := database.Open(ctx, o.dialect, o.dsn, stats, log)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := database.Create(ctx, db, o.dialect); err != nil {
		return err
	}
	store, err := newStore(o, db)
	if err != nil {
		return err
	}
	listener, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.listen, err)
	}
	server := &http.Server{
		Handler:           httpapi.NewHandler(service.New(store), stats, log),
		ReadHeaderTimeout: 15 * time.Second,
	}
	server.SetKeepAlivesEnabled(false) // one call per connection, as the reference
	stats.Reset()                      // count the calls' statements, not start-up's
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()
	if _, err := fmt.Fprintf(stdout, "listening %s\n", listener.Addr()); err != nil {
		return err
	}

	stdinClosed := make(chan struct{})
	go func() {
		readCommands(stdin, stdout, stats)
		close(stdinClosed)
	}()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	case <-stdinClosed:
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return server.Shutdown(shutdownCtx)
}

// statementKinds are the kinds the "statements" command reports: those of
// the Python servers (BEGIN, which they do not count, is left out).
var statementKinds = []string{trace.KindSelect, trace.KindSelectForUpdate, trace.KindUpdate,
	trace.KindInsert, trace.KindDelete, trace.KindCommit, trace.KindRollback, trace.KindOther}

// readCommands reads stdin until it ends, answering each "statements" line
// with one line "statements {JSON}": the counts so far, by kind.
func readCommands(stdin io.Reader, stdout io.Writer, stats *trace.Stats) {
	lines := bufio.NewScanner(stdin)
	for lines.Scan() {
		if strings.TrimSpace(lines.Text()) != "statements" {
			continue
		}
		all := stats.Snapshot()
		counts := make(map[string]int64, len(statementKinds))
		for _, kind := range statementKinds {
			counts[kind] = all[kind]
		}
		body, _ := json.Marshal(counts) // a map of numbers always encodes
		fmt.Fprintf(stdout, "statements %s\n", body)
	}
}

func newStore(o options, db *sql.DB) (service.Store, error) {
	if o.impl == "orm" {
		return gormstore.New(db, o.dialect)
	}
	return sqlstore.New(db, o.dialect), nil
}
