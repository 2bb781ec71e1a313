package main

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
)

// sessionSettings are set on every connection FerretDB opens (as runtime
// parameters in its URL), never server-wide.
//
// FerretDB 1.24 sends an equality filter as `_jsonb->$1 @> $2`, the field
// name a parameter: with a generic plan PostgreSQL cannot see which field
// the expression is, so no index can match it; custom plans bind the name
// first. synchronous_commit=off acknowledges a write before its WAL is
// flushed, as MongoDB does with its default write concern (no journal
// wait): each write no longer waits on the disk.
var sessionSettings = map[string]string{
	"plan_cache_mode":    "force_custom_plan",
	"synchronous_commit": "off",
}

// ginTwins is an event trigger that gives every B-tree index FerretDB
// creates on `(_jsonb -> 'field')` a GIN (jsonb_path_ops) twin on the same
// expression. FerretDB's equality filters use the containment operator @>,
// which a B-tree index cannot answer, so without the twins every pushed-down
// filter, `_id` included, scans the whole table (about 10 ms at 20,000
// documents; under 1 ms with them). Field names are read back from the index
// definition, where PostgreSQL writes them as quoted literals.
//
// The twins are built with fastupdate off. With GIN's default pending list,
// new entries wait unsorted in a list that every index search scans in full
// until a vacuum or 4 MB of them merge it: after a bulk insert of 20,001
// documents all 20,001 sat there, and each pushed-down lookup took about 3 ms
// instead of under 1; one-at-a-time inserts (create user ordered items) grew
// the list as they went, each lookup slower than the one before.
// Inserting straight into the index costs each insert a little instead.
const ginTwins = `
CREATE OR REPLACE FUNCTION stratabench_gin_twins() RETURNS event_trigger LANGUAGE plpgsql AS $fn$
DECLARE
	command record;
	field text[];
BEGIN
	FOR command IN SELECT * FROM pg_event_trigger_ddl_commands() WHERE object_type = 'index' LOOP
		CONTINUE WHEN (SELECT am.amname FROM pg_class c JOIN pg_am am ON am.oid = c.relam
		               WHERE c.oid = command.objid) <> 'btree';
		FOR field IN SELECT regexp_matches(pg_get_indexdef(command.objid), '\(_jsonb -> ''((?:[^'']|'''')*)''::text\)', 'g') LOOP
			EXECUTE format('CREATE INDEX ON %s USING gin ((_jsonb -> %L) jsonb_path_ops) WITH (fastupdate = off)',
			               (SELECT indrelid::regclass FROM pg_index WHERE indexrelid = command.objid),
			               replace(field[1], '''''', ''''));
		END LOOP;
	END LOOP;
END
$fn$;
DROP EVENT TRIGGER IF EXISTS stratabench_gin_twins;
CREATE EVENT TRIGGER stratabench_gin_twins ON ddl_command_end WHEN TAG IN ('CREATE INDEX')
	EXECUTE FUNCTION stratabench_gin_twins();
`

// preparePostgreSQL installs the GIN twins' trigger in the database of
// rawURL and returns the URL FerretDB connects with (the session settings
// added). It needs a superuser, as event triggers do.
func preparePostgreSQL(ctx context.Context, rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error quotes the URL, password included: say only what is wrong.
		return "", fmt.Errorf("the PostgreSQL URL does not parse")
	}
	query := u.Query()
	for name, value := range sessionSettings {
		query.Set(name, value)
	}
	u.RawQuery = query.Encode()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return "", fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, ginTwins); err != nil {
		return "", fmt.Errorf("install the GIN-twin trigger in PostgreSQL: %w", err)
	}
	// FerretDB's pool (not PostgreSQL) reads this one; it would open up to
	// 50 connections, all that the project's private PostgreSQL accepts.
	if !query.Has("pool_max_conns") {
		query.Set("pool_max_conns", "20")
		u.RawQuery = query.Encode()
	}
	return u.String(), nil
}

// withoutPassword is rawURL with its user name kept and its password left
// out: the URL FerretDB serves clients with. FerretDB 1.24 connects to
// PostgreSQL with the user name and password a client authenticated with
// (PLAIN), and one that gave none with the credentials of this URL; without
// a password in it, PostgreSQL (SCRAM) refuses that client, so the server
// serves only clients that know the PostgreSQL account's password.
func withoutPassword(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return rawURL
	}
	u.User = url.User(u.User.Username())
	return u.String()
}
