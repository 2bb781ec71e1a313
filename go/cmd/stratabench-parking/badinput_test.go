package main

import (
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "github.com/glebarez/go-sqlite"
)

// Malformed calls get the answers of docs/studies/parking.md §3 (HTTP 500 for an unknown
// function or a service_descr that is not JSON, bad_protocol, or the
// function's default status) and change no row.
func TestBadInput(t *testing.T) {
	for _, impl := range []string{"orm", "sql"} {
		t.Run(impl, func(t *testing.T) {
			dsn := filepath.Join(t.TempDir(), "parking.db")
			c := startServer(t, "-impl", impl, "-db", "sqlite", "-dsn", dsn)
			db, err := sql.Open("sqlite", dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			// A paid reservation, so that refusals have rows to leave alone.
			u, plate, trans := randomID(), randomPlate(), randomID()
			c.reserve(t, u, plate, "120", "102", trans, "0.00")
			c.expect(t, "success", "", "pay_reservation", "transaction_id", trans)
			before := snapshot(t, db)

			good := descr("parking_id", "1333", "duration", "120", "registration_plate", plate)
			d0 := descr("parking_object_id", "1333", "hours", "2") // protocol 0 without plate or ticket
			inject := "1333' OR '1'='1"
			cases := []struct {
				path, want string
			}{
				{"/nope?version=2", "500 Internal server error"},
				{"/get_service_info?service_descr=%7Bbad&user_id=1&version=2", "500 Internal server error"},
				{"/pay_reservation?service_descr=%5B&transaction_id=1", "500 Internal server error"},
				{"/get_service_info?version=3", "bad_protocol"},
				{"/pay_reservation?version=x&transaction_id=" + trans, "bad_protocol"},
				{"/get_user_account?version=-1", "bad_protocol"},
				{"/get_service_info?service_descr=%5B1%5D&user_id=1&version=2", "not_available"},
				{"/get_service_info?service_descr=" + q(descr("parking_id", inject, "duration", "120")) + "&user_id=1&version=2", "not_available/invalid_parking_id"},
				{"/get_service_info?service_descr=" + q(descr("parking_id", "1333", "duration", "abc")) + "&user_id=1&version=2", "not_available"},
				{"/get_service_info?service_descr=" + q(descr("parking_id", "1333", "duration", "-5")) + "&user_id=1&version=2", "not_available/invalid_duration"},
				{"/get_service_info?service_descr=" + q(descr("parking_id", "1333", "duration", strings.Repeat("9", 30))) + "&user_id=1&version=2", "not_available"},
				{"/get_service_info?service_descr=" + q(`{"parking_id": 1333, "duration": 120}`) + "&user_id=1&version=2", "success"},
				{"/get_service_info?service_descr=" + q(`{"parking_id": "1333", "duration": true}`) + "&user_id=1&version=2", "not_available"},
				{"/get_service_info?service_descr=" + q(descr("parking_object_id", "1333")) + "&version=0", "not_available"},
				{"/get_service_info?service_descr=" + q(descr("parking_object_id", "1333-", "hours", "1")) + "&version=0", "not_available"},
				{"/create_reservation?service_descr=" + q(good) + "&price=abc&transaction_id=" + randomID() + "&user_id=" + u + "&version=2", "not_available"},
				{"/create_reservation?service_descr=" + q(good) + "&price=1e999999&transaction_id=" + randomID() + "&user_id=" + u + "&version=2", "not_available"},
				{"/create_reservation?service_descr=" + q(good) + "&price=102&transaction_id=123&user_id=" + u + "&version=2", "bad_transaction"},
				{"/create_reservation?service_descr=" + q(good) + "&price=102&transaction_id=" + strings.Repeat("7", 65) + "&user_id=" + u + "&version=2", "bad_transaction"},
				{"/create_reservation?service_descr=" + q(good) + "&price=102&pay_from_balance=103&transaction_id=" + randomID() + "&user_id=" + u + "&version=2", "wrong_price"},
				{"/create_reservation?service_descr=" + q(good) + "&price=102&pay_from_balance=-1&transaction_id=" + randomID() + "&user_id=" + u + "&version=2", "wrong_price"},
				{"/create_reservation?service_descr=" + q(good) + "&price=102&pay_from_balance=50&transaction_id=" + randomID() + "&user_id=" + u + "&version=2", "not_available"},
				{"/create_reservation?service_descr=" + q(good) + "&price=101.999&transaction_id=" + randomID() + "&user_id=" + u + "&version=2", "wrong_price"},
				{"/create_reservation?service_descr=" + q(good) + "&price=51&transaction_id=" + trans + "&user_id=" + u + "&version=2", "bad_transaction"},
				{"/pay_reservation?transaction_id=" + q(inject) + "&version=2", "bad_transaction"},
				{"/cancel_reservation?version=2", "bad_transaction"},
				{"/stop_service?transaction_id=" + randomID(), "bad_transaction"},
				{"/account_transfer?transaction_id=x&dst_user_id=" + u, "bad_transaction"},
				{"/account_transfer?transaction_id=x&src_user_id=&dst_user_id=" + u, "success/nothing_to_transfer"}, // "" is a user
				{"/create_reservation?service_descr=" + q(d0) + "&price=102&transaction_id=" + randomID(), "not_available"},
				{"/create_reservation?service_descr=" + q(descr("parking_id", "1333", "duration", strings.Repeat("9", 30), "registration_plate", plate)) +
					"&price=102&transaction_id=" + randomID() + "&user_id=" + u + "&version=2", "wrong_price"},
				{"/get_service_info?service_descr=" + q(descr("parking_id", "1333", "duration", "120", "user_ticket", "")) + "&user_id=1&version=2", "not_available/user_ticket_not_found"},
				{"/get_service_info?service_descr=" + q(`{"parking_id": true, "duration": "120"}`) + "&user_id=1&version=2", "not_available/invalid_parking_id"},
				{"/account_transfer?transaction_id=x&src_user_id=" + q(inject) + "&dst_user_id=" + q(inject), "bad_transaction/same_src_and_dst"},
				{"/issue_ticket?version=2", "not_available"},
				{"/issue_ticket?parking_id=" + q(inject), "not_available"},
				{"/leave_parking?parking_id=15001&user_ticket=" + q(inject), "not_available"},
				{"/check_plate_number?version=2", "not_available"},
				{"/x/y/get_user_account?user_id=" + q(inject), "success"},
			}
			for _, tc := range cases {
				if got := c.raw(t, tc.path); got != tc.want {
					t.Errorf("%s: got %s, want %s", tc.path, got, tc.want)
				}
			}
			if after := snapshot(t, db); !reflect.DeepEqual(before, after) {
				t.Errorf("refused calls changed the database:\nbefore %v\nafter  %v", before, after)
			}
			resp, err := c.http.Post(c.base+"get_user_account", "application/x-www-form-urlencoded", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotImplemented {
				t.Errorf("POST answered %d, want 501", resp.StatusCode)
			}
		})
	}
}

func q(s string) string { return url.QueryEscape(s) }

// raw sends a GET and sums the answer up as "status[/status_code]", or
// "500 body" for an HTTP 500.
func (c *client) raw(t *testing.T, path string) string {
	t.Helper()
	resp, err := c.http.Get(strings.TrimSuffix(c.base, "/") + path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Sprintf("%d %s", resp.StatusCode, body)
	}
	a := decodeAnswer(t, path, body)
	if code := a.str("status_code"); code != "" {
		return a.str("status") + "/" + code
	}
	return a.str("status")
}

// snapshot is every table's row count and the sums that the invariants of
// docs/studies/parking.md §9 are about.
func snapshot(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, query := range []string{
		"SELECT count(*), sum(places_avail) FROM t_product",
		"SELECT count(*), sum(paid_amount), max(paid_until_ts), count(finish_ts) FROM t_order",
		"SELECT count(*), count(payment_ts), count(cancel_ts) FROM t_payment",
		"SELECT count(*), sum(balance), sum(reserved) FROM t_account",
		"SELECT count(*) FROM t_account_receipt",
		"SELECT count(*), sum(is_reserved) FROM t_account_consume",
		"SELECT count(*) FROM t_account_transfer",
	} {
		rows, err := db.Query(query)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		rows.Next()
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		out[query] = fmt.Sprint(vals...)
	}
	return out
}
