package trace

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Connector wraps a database/sql driver's connector: every statement that
// reaches the database is counted in Stats by kind and, with a Log, written
// with its parameters, and so is every result row, BEGIN, COMMIT and
// ROLLBACK. Statements are counted where they run, once, whichever path
// database/sql takes (direct query or prepared statement).
type Connector struct {
	base  driver.Connector
	stats *Stats
	log   *Log
	bind  Binder
}

// Binder turns a parameter into the value a database keeps for it (money
// and times on SQLite, which has no types of its own for them); ok false
// leaves the value to the driver.
type Binder func(v any) (bound any, ok bool)

// Wrap returns a traced connector for drv opened with dsn; bind may be nil.
func Wrap(drv driver.Driver, dsn string, stats *Stats, log *Log, bind Binder) (*Connector, error) {
	var base driver.Connector = dsnConnector{drv, dsn}
	if dc, ok := drv.(driver.DriverContext); ok {
		var err error
		if base, err = dc.OpenConnector(dsn); err != nil {
			return nil, err
		}
	}
	return WrapConnector(base, stats, log, bind), nil
}

// WrapConnector returns a traced connector around base; bind may be nil.
func WrapConnector(base driver.Connector, stats *Stats, log *Log, bind Binder) *Connector {
	return &Connector{base: base, stats: stats, log: log, bind: bind}
}

type dsnConnector struct {
	drv driver.Driver
	dsn string
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.drv }

// Connect opens a traced connection.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	base, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{base: base, t: c}, nil
}

// Driver is the wrapped driver.
func (c *Connector) Driver() driver.Driver { return c.base.Driver() }

func (c *Connector) record(kind, query string, args []driver.NamedValue) {
	c.stats.Add(kind)
	if c.log.On() {
		c.log.Printf("SQL", "%s %s", oneLine(query), formatArgs(args))
	}
}

func oneLine(query string) string { return strings.Join(strings.Fields(query), " ") }

func formatArgs(args []driver.NamedValue) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = formatValue(a.Value)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return fmt.Sprintf("%q", x)
	case []byte:
		return fmt.Sprintf("%q", x)
	case time.Time:
		return x.Format("'2006-01-02 15:04:05.999999'")
	}
	return fmt.Sprint(v)
}

type conn struct {
	base driver.Conn
	t    *Connector
}

var (
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.NamedValueChecker  = (*conn)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
	_ driver.StmtExecContext    = (*stmt)(nil)
	_ driver.StmtQueryContext   = (*stmt)(nil)
)

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	var s driver.Stmt
	var err error
	if pc, ok := c.base.(driver.ConnPrepareContext); ok {
		s, err = pc.PrepareContext(ctx, query)
	} else {
		s, err = c.base.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	return &stmt{base: s, query: query, t: c.t}, nil
}

func (c *conn) Close() error { return c.base.Close() }

func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	var tx driver.Tx
	var err error
	if bt, ok := c.base.(driver.ConnBeginTx); ok {
		tx, err = bt.BeginTx(ctx, opts)
	} else {
		tx, err = c.base.Begin() //nolint:staticcheck // drivers without BeginTx
	}
	if err != nil {
		return nil, err
	}
	c.t.record(KindBegin, "BEGIN", nil)
	return &txn{base: tx, t: c.t}, nil
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	ex, ok := c.base.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	res, err := ex.ExecContext(ctx, query, args)
	if errors.Is(err, driver.ErrSkip) {
		return nil, err
	}
	c.t.record(Classify(query), query, args)
	return res, err
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.base.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	r, err := q.QueryContext(ctx, query, args)
	if errors.Is(err, driver.ErrSkip) {
		return nil, err
	}
	c.t.record(Classify(query), query, args)
	if err != nil {
		return nil, err
	}
	return &rows{base: r, t: c.t}, nil
}

func (c *conn) CheckNamedValue(v *driver.NamedValue) error {
	if c.t.bind != nil {
		if bound, ok := c.t.bind(v.Value); ok {
			v.Value = bound
			return nil
		}
	}
	if nc, ok := c.base.(driver.NamedValueChecker); ok {
		return nc.CheckNamedValue(v)
	}
	return driver.ErrSkip // database/sql's default conversion
}

func (c *conn) ResetSession(ctx context.Context) error {
	if sr, ok := c.base.(driver.SessionResetter); ok {
		return sr.ResetSession(ctx)
	}
	return nil
}

func (c *conn) IsValid() bool {
	if v, ok := c.base.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

type txn struct {
	base driver.Tx
	t    *Connector
}

func (x *txn) Commit() error {
	err := x.base.Commit()
	x.t.record(KindCommit, "COMMIT", nil)
	return err
}

func (x *txn) Rollback() error {
	err := x.base.Rollback()
	x.t.record(KindRollback, "ROLLBACK", nil)
	return err
}

type stmt struct {
	base  driver.Stmt
	query string
	t     *Connector
}

func (s *stmt) Close() error  { return s.base.Close() }
func (s *stmt) NumInput() int { return s.base.NumInput() }

func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	var res driver.Result
	var err error
	if se, ok := s.base.(driver.StmtExecContext); ok {
		res, err = se.ExecContext(ctx, args)
	} else {
		res, err = s.base.Exec(values(args)) //nolint:staticcheck // drivers without contexts
	}
	s.t.record(Classify(s.query), s.query, args)
	return res, err
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	var r driver.Rows
	var err error
	if sq, ok := s.base.(driver.StmtQueryContext); ok {
		r, err = sq.QueryContext(ctx, args)
	} else {
		r, err = s.base.Query(values(args)) //nolint:staticcheck // drivers without contexts
	}
	s.t.record(Classify(s.query), s.query, args)
	if err != nil {
		return nil, err
	}
	return &rows{base: r, t: s.t}, nil
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, v := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}

func values(args []driver.NamedValue) []driver.Value {
	out := make([]driver.Value, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}

// rows logs each result row as it is read.
type rows struct {
	base driver.Rows
	t    *Connector
}

func (r *rows) Columns() []string { return r.base.Columns() }
func (r *rows) Close() error      { return r.base.Close() }

func (r *rows) Next(dest []driver.Value) error {
	err := r.base.Next(dest)
	if err == nil && r.t.log.On() {
		parts := make([]string, len(dest))
		for i, v := range dest {
			parts[i] = formatValue(v)
		}
		r.t.log.Printf("ROW", "(%s)", strings.Join(parts, ", "))
	} else if err != nil && !errors.Is(err, io.EOF) && r.t.log.On() {
		r.t.log.Printf("SQL", "error reading rows: %v", err)
	}
	return err
}
