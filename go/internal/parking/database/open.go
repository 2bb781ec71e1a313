// Package database opens the parking study's database (SQLite, PostgreSQL
// or MariaDB/MySQL) through the statement tracer, and creates its tables
// when absent (docs/studies/parking.md §6).
package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/url"
	"strings"
	"time"

	gosqlite "github.com/glebarez/go-sqlite"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/stdlib"

	"stratabench.dev/go/internal/parking/rules"
	"stratabench.dev/go/internal/parking/trace"
)

// Dialect names a database kind, as the -db flag spells it.
type Dialect string

// The databases a parking server runs on.
const (
	SQLite     Dialect = "sqlite"
	PostgreSQL Dialect = "postgresql"
	MySQL      Dialect = "mysql"
)

// ParseDialect checks a -db value.
func ParseDialect(s string) (Dialect, error) {
	switch d := Dialect(s); d {
	case SQLite, PostgreSQL, MySQL:
		return d, nil
	}
	return "", fmt.Errorf("unknown database %q: want sqlite, postgresql or mysql", s)
}

// Open connects to dsn through the tracer and checks the connection.
// DSNs: SQLite a file path, a file: URI or sqlite:///path; PostgreSQL a
// postgresql:// URL or key=value string (pgx); MySQL/MariaDB a mysql:// URL
// or a go-sql-driver DSN (user:pass@tcp(host:port)/db).
func Open(ctx context.Context, d Dialect, dsn string, stats *trace.Stats, log *trace.Log) (*sql.DB, error) {
	var connector *trace.Connector
	var err error
	switch d {
	case SQLite:
		connector, err = trace.Wrap(&gosqlite.Driver{}, sqliteDSN(dsn), stats, log, sqliteBind)
	case PostgreSQL:
		connector, err = trace.Wrap(stdlib.GetDefaultDriver(), dsn, stats, log, nil)
	case MySQL:
		var cfg *mysql.Config
		if cfg, err = mysqlConfig(dsn); err == nil {
			var base driver.Connector
			if base, err = mysql.NewConnector(cfg); err == nil {
				connector = trace.WrapConnector(base, stats, log, nil)
			}
		}
	default:
		err = fmt.Errorf("unknown database %q", d)
	}
	if err != nil {
		return nil, fmt.Errorf("%s DSN: %w", d, err)
	}
	db := sql.OpenDB(connector)
	if d == SQLite {
		// One connection: SQLite locks the whole file, and one writer at a
		// time never meets SQLITE_BUSY.
		db.SetMaxOpenConns(1)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to %s: %w", d, err)
	}
	return db, nil
}

func sqliteDSN(dsn string) string {
	if rest, ok := strings.CutPrefix(dsn, "sqlite://"); ok {
		return rest
	}
	return dsn
}

// mysqlConfig reads a mysql:// URL or a go-sql-driver DSN, and sets what
// the server relies on: times read as time.Time in UTC, and parameters
// interpolated client-side (one round trip per statement, as MySQLdb did).
func mysqlConfig(dsn string) (*mysql.Config, error) {
	var cfg *mysql.Config
	if strings.HasPrefix(dsn, "mysql://") || strings.HasPrefix(dsn, "mariadb://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return nil, err
		}
		cfg = mysql.NewConfig()
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
		cfg.Net = "tcp"
		cfg.Addr = u.Host
		cfg.DBName = strings.TrimPrefix(u.Path, "/")
	} else {
		var err error
		if cfg, err = mysql.ParseDSN(dsn); err != nil {
			return nil, err
		}
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.InterpolateParams = true
	// Affected rows count matched rows, so that saving an unchanged row is
	// not taken for a missing one (GORM's Save then tries an INSERT).
	cfg.ClientFoundRows = true
	return cfg, nil
}

// sqliteTime is how timestamps are kept on SQLite: text that sorts as
// time does, in SQLAlchemy's format (the Python servers share the tables).
const sqliteTime = "2006-01-02 15:04:05.000000"

// sqliteBind stores money as BIGINT micro-units and times as sqliteTime
// text on SQLite, which has neither a decimal nor a time type.
func sqliteBind(v any) (any, bool) {
	switch x := v.(type) {
	case rules.Amount:
		return int64(x), true
	case *rules.Amount:
		if x == nil {
			return nil, true
		}
		return int64(*x), true
	case time.Time:
		return x.UTC().Format(sqliteTime), true
	case *time.Time:
		if x == nil {
			return nil, true
		}
		return x.UTC().Format(sqliteTime), true
	}
	return nil, false
}
