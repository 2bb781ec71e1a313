package trace

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gosqlite "github.com/glebarez/go-sqlite"
)

func TestClassify(t *testing.T) {
	for query, want := range map[string]string{
		"SELECT id FROM t_product WHERE name = ?":                                             KindSelect,
		"  select * from t where id = 1 FOR UPDATE ":                                          KindSelectForUpdate,
		"SELECT * FROM `t_order` WHERE id = 1 LIMIT 1 FOR UPDATE":                             KindSelectForUpdate,
		"SELECT p.id FROM t_payment p JOIN t_order o ON o.id = p.order_id FOR UPDATE OF p, o": KindSelectForUpdate,
		"(SELECT 1)": KindSelect,
		"UPDATE t_account SET balance = ? WHERE id = ?":     KindUpdate,
		"INSERT INTO t_payment (a) VALUES (?) RETURNING id": KindInsert,
		"delete from t":           KindDelete,
		"CREATE TABLE x (id int)": KindOther,
		"":                        KindOther,
	} {
		if got := Classify(query); got != want {
			t.Errorf("Classify(%q) = %s, want %s", query, got, want)
		}
	}
}

// Statements are counted once where they run, whichever path database/sql
// takes, and logged with their parameters and rows.
func TestConnectorCountsAndLogs(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "sql.log")
	log, err := OpenLog(logPath)
	if err != nil {
		t.Fatal(err)
	}
	stats := &Stats{}
	connector, err := Wrap(&gosqlite.Driver{}, filepath.Join(dir, "t.db"), stats, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO t (name) VALUES (?)", "it's"); err != nil {
		t.Fatal(err)
	}
	var name string
	if err := tx.QueryRow("SELECT name FROM t WHERE id = ?", 1).Scan(&name); err != nil || name != "it's" {
		t.Fatalf("read back %q, %v", name, err)
	}
	stmt, err := tx.Prepare("UPDATE t SET name = ? WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stmt.Exec("x", 1); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{KindOther: 1, KindBegin: 1, KindInsert: 1, KindSelect: 1, KindUpdate: 1, KindCommit: 1}
	for _, kind := range Kinds {
		if got := stats.Snapshot()[kind]; got != want[kind] {
			t.Errorf("%s counted %d times, want %d", kind, got, want[kind])
		}
	}
	stats.Reset()
	if got := stats.Snapshot()[KindSelect]; got != 0 {
		t.Errorf("after Reset, SELECT = %d", got)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{`SQL INSERT INTO t (name) VALUES (?) ["it's"]`, `ROW ("it's")`, "SQL COMMIT []"} {
		if !strings.Contains(string(text), line) {
			t.Errorf("log lacks %q:\n%s", line, text)
		}
	}
}
