package service_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"stratabench.dev/go/internal/parking/database"
	"stratabench.dev/go/internal/parking/gormstore"
	"stratabench.dev/go/internal/parking/rules"
	"stratabench.dev/go/internal/parking/service"
	"stratabench.dev/go/internal/parking/sqlstore"
	"stratabench.dev/go/internal/parking/trace"
)

// Paths of the business logic that the suite's five cases never take,
// against both stores on SQLite; time passing is simulated by moving the
// stored timestamps back.
type fixture struct {
	t   *testing.T
	svc *service.Service
	db  *sql.DB
	n   int
}

func eachStore(t *testing.T, test func(f *fixture)) {
	for _, impl := range []string{"orm", "sql"} {
		t.Run(impl, func(t *testing.T) {
			ctx := context.Background()
			db, err := database.Open(ctx, database.SQLite, filepath.Join(t.TempDir(), "p.db"), &trace.Stats{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			if err := database.Create(ctx, db, database.SQLite); err != nil {
				t.Fatal(err)
			}
			var store service.Store = sqlstore.New(db, database.SQLite)
			if impl == "orm" {
				if store, err = gormstore.New(db, database.SQLite); err != nil {
					t.Fatal(err)
				}
			}
			test(&fixture{t: t, svc: service.New(store), db: db})
		})
	}
}

// call runs a function with key/value parameters (version 2 unless given).
func (f *fixture) call(function string, kv ...string) service.Answer {
	f.t.Helper()
	params := map[string]string{"version": "2"}
	for i := 0; i < len(kv); i += 2 {
		params[kv[i]] = kv[i+1]
	}
	a, err := f.svc.Call(context.Background(), function, params)
	if err != nil {
		f.t.Fatalf("%s: %v", function, err)
	}
	return a
}

func (f *fixture) expect(status, code, function string, kv ...string) service.Answer {
	f.t.Helper()
	a := f.call(function, kv...)
	if a.Status != status || a.Code != code {
		f.t.Fatalf("%s %v: %s/%s, want %s/%s", function, kv, a.Status, a.Code, status, code)
	}
	return a
}

func field(fields []service.Field, key string) any {
	for _, x := range fields {
		if x.Key == key {
			return x.Value
		}
	}
	return nil
}

func (f *fixture) id() string {
	f.n++
	return fmt.Sprintf("10000%d", f.n)
}

func (f *fixture) exec(query string, args ...any) {
	f.t.Helper()
	if _, err := f.db.Exec(query, args...); err != nil {
		f.t.Fatal(err)
	}
}

// age moves every timestamp of the orders back by d, as if d had passed.
func (f *fixture) age(d time.Duration) {
	f.t.Helper()
	rows, err := f.db.Query("SELECT id, start_ts, paid_until_ts FROM t_order")
	if err != nil {
		f.t.Fatal(err)
	}
	type times struct {
		id           int64
		start, until time.Time
	}
	var all []times
	for rows.Next() {
		var x times
		if err := rows.Scan(&x.id, &x.start, &x.until); err != nil {
			f.t.Fatal(err)
		}
		all = append(all, x)
	}
	rows.Close()
	for _, x := range all {
		f.exec("UPDATE t_order SET start_ts = ?, paid_until_ts = ? WHERE id = ?", x.start.Add(-d), x.until.Add(-d), x.id)
	}
}

func prepaid(minutes string) string {
	return fmt.Sprintf(`{"parking_id": "1333", "duration": %q, "registration_plate": "A001AA77"}`, minutes)
}

func (f *fixture) reservePaid(user, price, minutes string) string {
	f.t.Helper()
	trans := f.id()
	f.expect("success", "", "create_reservation", "service_descr", prepaid(minutes), "price", price,
		"transaction_id", trans, "user_id", user)
	f.expect("success", "", "pay_reservation", "transaction_id", trans)
	return trans
}

func TestFullLot(t *testing.T) {
	eachStore(t, func(f *fixture) {
		f.exec("UPDATE t_product SET places_avail = 0")
		f.expect("not_available", "", "create_reservation", "service_descr", prepaid("60"), "price", "51",
			"transaction_id", f.id(), "user_id", "u")
		f.expect("not_available", "", "issue_ticket", "parking_id", "15001")
	})
}

func TestStopService(t *testing.T) {
	eachStore(t, func(f *fixture) {
		trans := f.reservePaid("u", "51", "60")
		f.age(61 * time.Minute) // paid time over: nothing to refund, no receipt
		if a := f.expect("success", "", "stop_service", "transaction_id", trans); field(a.Fields, "delta_amount") != "0.00" {
			t.Errorf("refund after the paid time: %v", a.Fields)
		}
		if a := f.expect("success", "", "get_user_account", "user_id", "u"); field(a.Fields, "balance") != "0.00" {
			t.Errorf("balance %v", a.Fields)
		}
		trans = f.reservePaid("u", "102", "120")
		f.age(31 * time.Minute) // 89 minutes left less a second: 75 refunded at 0.85
		if a := f.expect("success", "", "stop_service", "transaction_id", trans); field(a.Fields, "delta_amount") != "63.75" {
			t.Errorf("refund with 89 minutes left: %v", a.Fields)
		}
		f.expect("bad_transaction", "", "stop_service", "transaction_id", f.id()) // unknown
		unpaid := f.id()
		f.expect("success", "", "create_reservation", "service_descr", prepaid("60"), "price", "51",
			"transaction_id", unpaid, "user_id", "u")
		f.expect("bad_transaction", "", "stop_service", "transaction_id", unpaid)
	})
}

func TestTicket(t *testing.T) {
	eachStore(t, func(f *fixture) {
		ticket := field(f.expect("success", "", "issue_ticket", "parking_id", "15001").Fields, "user_ticket").(string)
		byTicket := fmt.Sprintf(`{"parking_id": "15001", "user_ticket": %q, "registration_plate": "A001AA77"}`, ticket)
		f.expect("not_enough_paid", "", "leave_parking", "parking_id", "15001", "user_ticket", ticket)
		f.age(16*time.Minute + 10*time.Second) // never paid: 16 minutes cost two quarters
		q := f.expect("success", "", "get_service_info", "service_descr", byTicket, "user_id", "u")
		if field(q.Fields, "price") != "30.00" {
			t.Fatalf("16 minutes on a ticket: %v", q.Fields)
		}
		info := field(q.Fields, "info").([]service.Field)
		if field(info, "duration") != int64(30) || field(info, "paid_duration") != int64(0) {
			t.Errorf("ticket info %v", info)
		}
		trans := f.id()
		f.expect("success", "", "create_reservation", "service_descr", byTicket, "price", "30",
			"transaction_id", trans, "user_id", "u")
		f.expect("success", "", "pay_reservation", "transaction_id", trans)
		f.expect("bad_transaction", "", "stop_service", "transaction_id", trans) // a ticket's payment
		f.age(14*time.Minute + 30*time.Second)                                   // paid until 13m50s from now: then 40 s past it
		q = f.expect("success", "", "get_service_info", "service_descr", byTicket, "user_id", "u")
		if field(q.Fields, "price") != "0.00" {
			t.Errorf("40 s past paid time: %v", q.Fields)
		}
		f.age(15 * time.Minute) // grace period over
		f.expect("not_enough_paid", "", "leave_parking", "parking_id", "15001", "user_ticket", ticket)
		f.expect("not_available", "", "leave_parking", "parking_id", "15001", "user_ticket", "0"+ticket)

		// Cancelling an unpaid ticket reservation closes the ticket's order.
		other := field(f.expect("success", "", "issue_ticket", "parking_id", "15001").Fields, "user_ticket").(string)
		otherDescr := fmt.Sprintf(`{"parking_id": "15001", "user_ticket": %q, "registration_plate": "A001AA77"}`, other)
		trans = f.id()
		f.expect("success", "", "create_reservation", "service_descr", otherDescr, "price", "15",
			"transaction_id", trans, "user_id", "u")
		f.expect("success", "", "cancel_reservation", "transaction_id", trans)
		f.expect("bad_transaction", "", "pay_reservation", "transaction_id", trans)
		f.expect("not_available", "user_ticket_out_of_parking", "get_service_info", "service_descr", otherDescr, "user_id", "u")
	})
}

func TestProtocolVersions(t *testing.T) {
	eachStore(t, func(f *fixture) {
		v0 := `{"parking_object_id": "1333", "hours": "1.01", "plate_number": "A001AA77"}`
		q := f.expect("success", "", "get_service_info", "service_descr", v0, "version", "0")
		if field(q.Fields, "price") != "51.00" || len(field(q.Fields, "info").([]service.Field)) != 1 {
			t.Errorf("v0 quote %v", q.Fields)
		}
		a := f.expect("success", "", "create_reservation", "service_descr", v0, "price", "51.0",
			"transaction_id", f.id(), "version", "0")
		if len(a.Fields) != 0 {
			t.Errorf("v0 reservation answers %v, want the envelope only", a.Fields)
		}
		f.expect("not_available", "", "get_service_info", "service_descr", `{"parking_object_id": "1333-", "hours": "1"}`, "version", "0")
		f.expect("not_available", "invalid_registration_plate", "get_service_info",
			"service_descr", `{"parking_id": "1333", "duration": "60"}`, "user_id", "u", "version", "1")
		v1 := f.expect("success", "", "get_service_info", "service_descr", prepaid("61"), "user_id", "u", "version", "1")
		info := field(v1.Fields, "info").([]service.Field)
		if field(v1.Fields, "price") != "63.75" || field(info, "duration") != int64(75) || field(info, "balance") != nil {
			t.Errorf("v1 quote %v", v1.Fields)
		}
		f.expect("bad_protocol", "", "get_user_account", "version", "3")
	})
}

func TestWalletReservation(t *testing.T) {
	eachStore(t, func(f *fixture) {
		refund := f.reservePaid("u", "102", "120")
		f.expect("success", "", "stop_service", "transaction_id", refund) // 89.25 into the wallet
		trans := f.id()
		f.expect("success", "", "create_reservation", "service_descr", prepaid("60"), "price", "51",
			"transaction_id", trans, "user_id", "u", "pay_from_balance", "51")
		// Only 38.25 of the wallet is still free.
		f.expect("not_available", "", "create_reservation", "service_descr", prepaid("60"), "price", "51",
			"transaction_id", f.id(), "user_id", "u", "pay_from_balance", "40")
		f.expect("success", "", "cancel_reservation", "transaction_id", trans)
		var balance, reserved rules.Amount
		if err := f.db.QueryRow("SELECT balance, reserved FROM t_account WHERE user_eid = 'u'").Scan(&balance, &reserved); err != nil {
			t.Fatal(err)
		}
		if balance != 89_250_000 || reserved != 0 {
			t.Errorf("after cancelling, balance %d reserved %d (millionths)", balance, reserved)
		}
		f.expect("bad_transaction", "", "pay_reservation", "transaction_id", trans) // cancelled, never paid
	})
}
