package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The five test cases of docs/studies/parking.md §11.2 (protocol 2 with the -apu checks), call
// by call, against a server started by run(), for both implementations on
// SQLite, and on PostgreSQL and MariaDB when STRATABENCH_PARKING_PG_DSN and
// STRATABENCH_PARKING_MYSQL_DSN name databases to use (the Python suite's
// `stratabench services up` prints their URLs).
func TestSuiteSQLite(t *testing.T) {
	for _, impl := range []string{"orm", "sql"} {
		t.Run(impl, func(t *testing.T) {
			dsn := filepath.Join(t.TempDir(), "parking.db")
			runSuite(t, impl, "sqlite", dsn)
		})
	}
}

func TestSuiteServers(t *testing.T) {
	dbs := map[string]string{
		"postgresql": os.Getenv("STRATABENCH_PARKING_PG_DSN"),
		"mysql":      os.Getenv("STRATABENCH_PARKING_MYSQL_DSN"),
	}
	ran := false
	for db, dsn := range dbs {
		if dsn == "" {
			continue
		}
		ran = true
		for _, impl := range []string{"orm", "sql"} {
			t.Run(db+"/"+impl, func(t *testing.T) { runSuite(t, impl, db, dsn) })
		}
	}
	if !ran {
		t.Skip("set STRATABENCH_PARKING_PG_DSN or STRATABENCH_PARKING_MYSQL_DSN to run on a database server")
	}
}

func runSuite(t *testing.T, impl, db, dsn string) {
	logPath := filepath.Join(t.TempDir(), "parking.log")
	c := startServer(t, "-impl", impl, "-db", db, "-dsn", dsn, "-log", logPath)
	c.resetStats()
	t.Run("account_transfer", c.testAccountTransfer)
	t.Run("parking_account", c.testParkingAccount)
	t.Run("postpay", c.testPostpay)
	t.Run("prepay", c.testPrepay)
	t.Run("version", c.testVersion)
	counts := c.stats()
	if _, err := io.WriteString(c.stdin, "statements\n"); err != nil {
		t.Fatal(err)
	}
	line, err := c.stdout.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var fromStdin map[string]int64
	if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "statements ")), &fromStdin); err != nil {
		t.Fatalf("answer to \"statements\": %q: %v", line, err)
	}
	for kind, n := range fromStdin {
		if counts[kind] != n {
			t.Errorf("stdin says %d %s, /_stats says %d", n, kind, counts[kind])
		}
	}
	if len(fromStdin) != 8 {
		t.Errorf("stdin's counts %v, want the eight kinds", fromStdin)
	}
	t.Logf("%s on %s, statements per suite run: %v", impl, db, counts)
	if counts["BEGIN"] != counts["COMMIT"]+counts["ROLLBACK"] {
		t.Errorf("%d transactions begun, %d committed, %d rolled back", counts["BEGIN"], counts["COMMIT"], counts["ROLLBACK"])
	}
	if counts["BEGIN"] != 66 { // 68 calls, two refused before touching a table (docs/studies/parking.md §11.4)
		t.Errorf("%d transactions per run, want 66", counts["BEGIN"])
	}
	if counts["INSERT"] != 27 { // every run inserts the same rows (docs/studies/parking.md §9)
		t.Errorf("%d INSERTs per run, want 27", counts["INSERT"])
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"HTTP request GET /get_service_info?", "HTTP response 200 {\"status\": ", "SQL SELECT", "ROW ("} {
		if !strings.Contains(string(log), want) {
			t.Errorf("log has no %q", want)
		}
	}
}

// client is the suite's side: one call per connection, form-encoded GET.
type client struct {
	t      *testing.T
	base   string
	http   *http.Client
	stdin  io.Writer     // the server's standard input: commands, then EOF
	stdout *bufio.Reader // and its standard output after "listening"
}

func startServer(t *testing.T, args ...string) *client {
	t.Helper()
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), append([]string{"-listen", "127.0.0.1:0"}, args...), stdinR, stdoutW)
		stdoutW.Close()
	}()
	out := bufio.NewReader(stdoutR)
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("server did not start: %v (%v)", err, <-done)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("first line %q, want \"listening 127.0.0.1:PORT\"", line)
	}
	t.Cleanup(func() {
		stdinW.Close() // end of stdin stops the server
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server stopped with %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("server did not stop when stdin closed")
		}
	})
	return &client{t: t, base: "http://" + addr + "/", stdin: stdinW, stdout: out,
		http: &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
}

type answer map[string]any

func (a answer) str(key string) string {
	s, _ := a[key].(string)
	return s
}

func (a answer) info(key string) any {
	info, _ := a["info"].(map[string]any)
	return info[key]
}

func (a answer) infoInt(key string) int64 {
	n, _ := a.info(key).(json.Number).Int64()
	return n
}

// descr writes service_descr as the suite does: every value a string.
func descr(kv ...string) string {
	parts := make([]string, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		parts = append(parts, fmt.Sprintf("%q: %q", kv[i], kv[i+1]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// call sends function with key/value parameters and version=2 last.
func (c *client) call(t *testing.T, function string, kv ...string) answer {
	t.Helper()
	q := make([]string, 0, len(kv)/2+1)
	for i := 0; i < len(kv); i += 2 {
		q = append(q, url.QueryEscape(kv[i])+"="+url.QueryEscape(kv[i+1]))
	}
	if !hasKey(kv, "version") {
		q = append(q, "version=2")
	}
	resp, err := c.http.Get(c.base + function + "?" + strings.Join(q, "&"))
	if err != nil {
		t.Fatalf("%s: %v", function, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s: HTTP %d %s: %s", function, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	return decodeAnswer(t, function, body)
}

// decodeAnswer reads a body as the suite's client does: a JSON object with
// both status and ts, else an error.
func decodeAnswer(t *testing.T, call string, body []byte) answer {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	var a answer
	if err := dec.Decode(&a); err != nil || a.str("status") == "" || a.str("ts") == "" {
		t.Fatalf("%s: not an answer: %s", call, body)
	}
	return a
}

func hasKey(kv []string, key string) bool {
	for i := 0; i < len(kv); i += 2 {
		if kv[i] == key {
			return true
		}
	}
	return false
}

// expect checks status and status_code ("" for none) of a call's answer.
func (c *client) expect(t *testing.T, status, code, function string, kv ...string) answer {
	t.Helper()
	a := c.call(t, function, kv...)
	if a.str("status") != status || a.str("status_code") != code {
		t.Fatalf("%s %v: got %s/%s, want %s/%s", function, kv, a.str("status"), a.str("status_code"), status, code)
	}
	return a
}

func (c *client) stats() map[string]int64 { return c.statsAt(http.MethodGet, "_stats") }

func (c *client) resetStats() { c.statsAt(http.MethodPost, "_stats/reset") }

func (c *client) statsAt(method, path string) map[string]int64 {
	req, _ := http.NewRequest(method, c.base+path, nil)
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var counts map[string]int64
	if err := json.NewDecoder(resp.Body).Decode(&counts); err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	return counts
}

func randomID() string    { return fmt.Sprint(1_000_000 + rand.IntN(1<<31-1_000_000)) }
func randomPlate() string { return fmt.Sprintf("K%03dMX77", rand.IntN(1000)) }

func money(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("money %q", s)
	}
	return r
}

// intPrice is the price as the suite's client sends it: no decimals.
func intPrice(t *testing.T, s string) string {
	return money(t, s).FloatString(0)
}

func (c *client) quote(t *testing.T, user, plate, minutes string) answer {
	t.Helper()
	return c.expect(t, "success", "", "get_service_info",
		"service_descr", descr("parking_id", "1333", "duration", minutes, "registration_plate", plate), "user_id", user)
}

func (c *client) reserve(t *testing.T, user, plate, minutes, price, trans, fromBalance string) {
	t.Helper()
	c.expect(t, "success", "", "create_reservation",
		"service_descr", descr("parking_id", "1333", "duration", minutes, "registration_plate", plate),
		"price", price, "transaction_id", trans, "user_id", user, "pay_from_balance", fromBalance)
}

func (c *client) balance(t *testing.T, user string) string {
	t.Helper()
	return c.expect(t, "success", "", "get_user_account", "user_id", user).str("balance")
}

func (c *client) testAccountTransfer(t *testing.T) {
	u, u2, u3 := randomID(), randomID(), randomID()
	plate := randomPlate()
	p := c.quote(t, u, plate, "120").str("price")
	t1 := randomID()
	c.reserve(t, u, plate, "120", intPrice(t, p), t1, "0.00")
	c.expect(t, "success", "", "pay_reservation", "transaction_id", t1)
	d := c.expect(t, "success", "", "stop_service", "transaction_id", t1).str("delta_amount")
	if d != "89.25" {
		t.Fatalf("refund %s, want 89.25", d)
	}
	if b := c.balance(t, u2); b != "0.00" {
		t.Fatalf("new user's balance %s", b)
	}
	x := fmt.Sprintf("%x", time.Now().UnixNano())
	transfer := func(status, code, src, dst string) {
		t.Helper()
		c.expect(t, status, code, "account_transfer", "transaction_id", x, "src_user_id", src, "dst_user_id", dst)
	}
	transfer("success", "nothing_to_transfer", u2, u)
	transfer("bad_transaction", "same_src_and_dst", u, u)
	p = c.quote(t, u, plate, "120").str("price")
	t2 := randomID()
	fromBalance := money(t, d)
	if money(t, p).Cmp(fromBalance) < 0 {
		fromBalance = money(t, p)
	}
	c.reserve(t, u, plate, "120", intPrice(t, p), t2, fromBalance.FloatString(2))
	transfer("not_available", "reserved_funds_present", u, u2)
	c.expect(t, "success", "", "cancel_reservation", "transaction_id", t2)
	transfer("success", "", u, u2)
	transfer("success", "already_done", u, u2)
	transfer("bad_transaction", "another_trans_exists", u, u3)
	if b := c.balance(t, u2); b != d {
		t.Fatalf("receiver's balance %s, want %s", b, d)
	}
	if b := c.balance(t, u); b != "0.00" {
		t.Fatalf("sender's balance %s, want 0.00", b)
	}
}

func (c *client) testParkingAccount(t *testing.T) {
	u := randomID()
	if b := c.balance(t, u); b != "0.00" {
		t.Fatalf("new user's balance %s", b)
	}
	total := new(big.Rat)
	var hourPrice string // of the 1-hour quote, which the wallet pays below
	for range 2 {
		plate := randomPlate()
		q := c.quote(t, u, plate, "120")
		if money(t, q.info("balance").(string)).Cmp(total) != 0 {
			t.Fatalf("balance %v, want %s", q.info("balance"), total.FloatString(2))
		}
		trans := randomID()
		c.reserve(t, u, plate, "120", intPrice(t, q.str("price")), trans, "0.00")
		c.expect(t, "success", "", "pay_reservation", "transaction_id", trans)
		d := c.expect(t, "success", "", "stop_service", "transaction_id", trans).str("delta_amount")
		total.Add(total, money(t, d))
		if again := c.expect(t, "success", "", "stop_service", "transaction_id", trans).str("delta_amount"); again != d {
			t.Fatalf("second stop refunds %s, first %s", again, d)
		}
		hour := c.quote(t, u, plate, "60")
		hourPrice = hour.str("price")
		if money(t, hour.info("balance").(string)).Cmp(total) != 0 {
			t.Fatalf("balance %v, want %s", hour.info("balance"), total.FloatString(2))
		}
		want := new(big.Rat).Mul(money(t, hour.str("price")), big.NewRat(7, 4))
		if money(t, d).Cmp(want) != 0 {
			t.Fatalf("refund %s, want 1.75 h × %s", d, hour.str("price"))
		}
		if b := c.balance(t, u); money(t, b).Cmp(total) != 0 {
			t.Fatalf("balance %s, want %s", b, total.FloatString(2))
		}
	}
	plate, q := randomPlate(), hourPrice
	trans := randomID()
	c.reserve(t, u, plate, "60", intPrice(t, q), trans, money(t, q).FloatString(2))
	c.expect(t, "success", "", "pay_reservation", "transaction_id", trans)
	after := money(t, c.quote(t, u, plate, "60").info("balance").(string))
	if spent := new(big.Rat).Sub(total, after); spent.Cmp(money(t, q)) != 0 {
		t.Fatalf("paying %s from the wallet took %s", q, spent.FloatString(2))
	}
	refund := c.expect(t, "success", "", "stop_service", "transaction_id", trans).str("delta_amount")
	if refund != "38.25" {
		t.Fatalf("refund %s, want 38.25", refund)
	}
	if b := c.balance(t, u); money(t, b).Cmp(new(big.Rat).Add(after, money(t, refund))) != 0 {
		t.Fatalf("balance %s after refund %s onto %s", b, refund, after.FloatString(2))
	}
}

func (c *client) testPostpay(t *testing.T) {
	ticket := c.expect(t, "success", "", "issue_ticket", "parking_id", "15001")
	k := ticket.str("user_ticket")
	a0 := ticket.infoOrTop("available_places") + 1
	u, plate := randomID(), randomPlate()
	byTicket := func(status, code, tk string) answer {
		t.Helper()
		return c.expect(t, status, code, "get_service_info",
			"service_descr", descr("parking_id", "15001", "user_ticket", tk, "registration_plate", plate), "user_id", u)
	}
	byTicket("not_available", "user_ticket_not_found", "xxx0")
	q := byTicket("success", "", k)
	if q.str("price") != "15.00" || q.info("start_ts") == nil || q.info("duration") == nil || q.info("paid_duration") == nil {
		t.Fatalf("ticket quote %v", q)
	}
	trans := randomID()
	c.expect(t, "success", "", "create_reservation",
		"service_descr", descr("parking_id", "15001", "user_ticket", k, "registration_plate", plate),
		"price", intPrice(t, q.str("price")), "transaction_id", trans, "user_id", u, "pay_from_balance", "0.00")
	if n := byTicket("success", "", k).infoInt("available_places"); n != a0-1 {
		t.Fatalf("%d places, want %d", n, a0-1)
	}
	c.expect(t, "success", "", "pay_reservation", "transaction_id", trans)
	c.expect(t, "success", "", "pay_reservation", "transaction_id", trans)
	if p := byTicket("success", "", k).str("price"); p != "0.00" {
		t.Fatalf("paid ticket costs %s", p)
	}
	c.expect(t, "success", "", "leave_parking", "parking_id", "15001", "user_ticket", k)
	byTicket("not_available", "user_ticket_out_of_parking", k)
	hour := c.expect(t, "success", "", "get_service_info",
		"service_descr", descr("parking_id", "15001", "duration", "60", "registration_plate", plate), "user_id", u)
	if n := hour.infoInt("available_places"); n != a0 {
		t.Fatalf("%d places after leaving, want %d", n, a0)
	}
	c.expect(t, "success", "", "cancel_reservation", "transaction_id", trans)
}

// infoOrTop reads an integer at the top of an answer (issue_ticket).
func (a answer) infoOrTop(key string) int64 {
	n, _ := a[key].(json.Number).Int64()
	return n
}

func (c *client) testPrepay(t *testing.T) {
	u, plate := randomID(), randomPlate()
	lot := func(name, minutes string) string {
		kv := []string{"parking_id", name, "registration_plate", plate}
		if minutes != "" {
			kv = append(kv, "duration", minutes)
		}
		return descr(kv...)
	}
	c.expect(t, "not_available", "invalid_user_id", "get_service_info", "service_descr", lot("1333", "120"))
	c.expect(t, "not_available", "invalid_parking_id", "get_service_info", "service_descr", lot("1333-", "120"), "user_id", u)
	c.expect(t, "not_available", "invalid_duration", "get_service_info", "service_descr", lot("1333", ""), "user_id", u)
	q := c.quote(t, u, plate, "120")
	places, p := q.infoInt("available_places"), q.str("price")
	trans := randomID()
	c.expect(t, "not_available", "invalid_registration_plate", "create_reservation",
		"service_descr", descr("parking_id", "1333", "duration", "120"),
		"price", intPrice(t, p), "transaction_id", trans, "user_id", u, "pay_from_balance", "0.00")
	plus1 := new(big.Rat).Add(money(t, p), big.NewRat(1, 1)).FloatString(0)
	c.expect(t, "wrong_price", "", "create_reservation", "service_descr", lot("1333", "120"),
		"price", plus1, "transaction_id", trans, "user_id", u, "pay_from_balance", "0.00")
	c.reserve(t, u, plate, "120", intPrice(t, p), trans, "0.00")
	c.reserve(t, u, plate, "120", intPrice(t, p), trans, "0.00")
	paid := func(want string) {
		t.Helper()
		if got := c.expect(t, "success", "", "check_plate_number", "registration_plate", plate).str("paid"); got != want {
			t.Fatalf("check_plate_number says %s, want %s", got, want)
		}
	}
	paid("false")
	c.expect(t, "success", "", "pay_reservation", "transaction_id", trans)
	if n := c.quote(t, u, plate, "120").infoInt("available_places"); n != places-1 {
		t.Fatalf("%d places after paying, want %d", n, places-1)
	}
	paid("true")
	c.expect(t, "success", "", "cancel_reservation", "transaction_id", trans)
	paid("false")
	if n := c.quote(t, u, plate, "120").infoInt("available_places"); n != places {
		t.Fatalf("%d places after cancelling, want %d", n, places)
	}
	c.expect(t, "success", "", "pay_reservation", "transaction_id", trans)
	c.expect(t, "success", "", "cancel_reservation", "transaction_id", trans)
}

func (c *client) testVersion(t *testing.T) {
	u, plate := randomID(), randomPlate()
	c.expect(t, "success", "", "get_service_info", "service_descr",
		descr("parking_object_id", "1333", "hours", "2", "plate_number", plate), "version", "0")
	c.expect(t, "success", "", "get_service_info", "service_descr",
		descr("parking_id", "1333", "duration", "120", "registration_plate", plate), "user_id", u, "version", "1")
	c.expect(t, "success", "", "get_service_info", "service_descr",
		descr("parking_id", "1333", "duration", "120", "registration_plate", plate), "user_id", u, "version", "2")
}
