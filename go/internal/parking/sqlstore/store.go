// Package sqlstore is the parking data layer on database/sql with no ORM:
// hand-written statements, row locks with FOR UPDATE, and the fewest
// statements the shared business logic allows: locking a payment also
// locks its order and reads its consumes in one joined SELECT, and the
// call's later reads of those rows are answered from it; a free-place
// change is one UPDATE, a wallet settlement two.
package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"stratabench.dev/go/internal/parking/database"
	"stratabench.dev/go/internal/parking/rules"
	"stratabench.dev/go/internal/parking/service"
)

// Store runs each call in a database/sql transaction.
type Store struct {
	db *sql.DB
	q  queries
}

// New returns a Store on db, whose statements are written for dialect d.
func New(db *sql.DB, d database.Dialect) *Store {
	return &Store{db: db, q: newQueries(d)}
}

// Begin starts the transaction of one call.
func (s *Store) Begin(ctx context.Context) (service.Tx, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &txn{tx: tx, q: &s.q, ctx: ctx, orders: map[int64]service.Order{},
		consumes: map[int64][]service.Consume{}}, nil
}

const (
	lotCols      = "id, name, display_name, places_avail, price"
	orderCols    = "id, product_id, user_eid, ticket_number, plate_number, start_ts, paid_until_ts, finish_ts, paid_amount, price"
	paymentCols  = "id, trans_number, order_id, ts, hours, amount, payment_ts, cancel_ts"
	accountCols  = "id, user_eid, balance, reserved"
	consumeCols  = "id, ts, account_id, dst_payment_id, amount, is_reserved"
	receiptCols  = "id, ts, account_id, src_order_id, amount"
	transferCols = "id, ts, trans_number, src_account_id, dst_account_id, amount"
)

// queries are the statements in the dialect's spelling: $n placeholders
// for PostgreSQL, and no FOR UPDATE on SQLite (it locks the whole file).
type queries struct {
	returningID                        bool // INSERT … RETURNING id instead of LastInsertId
	lotsByName, lockLotsByName         string
	saveLotPlaces, changePlaces        string
	order, lockOrder                   string
	ordersByTicket, lockOrdersByTicket string
	openTicketOrders, ticketTaken      string
	countPaidPlates                    string
	insertOrder, saveOrder             string
	paymentsByTrans, insertPayment     string
	savePayment                        string
	consumesOf, insertConsume          string
	confirmAccount, confirmConsume     string
	releaseAccount, releaseConsume     string
	accountsByUser, lockAccountsByUser string
	insertAccount, saveAccount         string
	receiptsOf, insertReceipt          string
	transfersByTrans, insertTransfer   string
}

func newQueries(d database.Dialect) queries {
	lock := " FOR UPDATE"
	// The payment's lock takes its order's row too; PostgreSQL refuses to
	// lock the outer-joined consumes, MariaDB locks what it reads.
	lockJoined := lock
	switch d {
	case database.SQLite:
		lock, lockJoined = "", ""
	case database.PostgreSQL:
		lockJoined = " FOR UPDATE OF p, o"
	}
	bind := func(q string) string { return q }
	if d == database.PostgreSQL {
		bind = dollarPlaceholders
	}
	insert := func(q string) string {
		if d == database.MySQL {
			return bind(q)
		}
		return bind(q + " RETURNING id")
	}
	return queries{
		returningID:        d != database.MySQL,
		lotsByName:         bind("SELECT " + lotCols + " FROM t_product WHERE name = ?"),
		lockLotsByName:     bind("SELECT " + lotCols + " FROM t_product WHERE name = ?" + lock),
		saveLotPlaces:      bind("UPDATE t_product SET places_avail = ? WHERE id = ?"),
		changePlaces:       bind("UPDATE t_product SET places_avail = places_avail + ? WHERE id = ?"),
		order:              bind("SELECT " + orderCols + " FROM t_order WHERE id = ?"),
		lockOrder:          bind("SELECT " + orderCols + " FROM t_order WHERE id = ?" + lock),
		ordersByTicket:     bind("SELECT " + orderCols + " FROM t_order WHERE ticket_number = ?"),
		lockOrdersByTicket: bind("SELECT " + orderCols + " FROM t_order WHERE ticket_number = ?" + lock),
		openTicketOrders:   bind("SELECT " + orderCols + " FROM t_order WHERE product_id = ? AND ticket_number = ? AND finish_ts IS NULL" + lock),
		ticketTaken:        bind("SELECT count(*) FROM t_order WHERE ticket_number = ?"),
		countPaidPlates:    bind("SELECT count(*) FROM t_order WHERE plate_number = ? AND paid_until_ts > ? AND finish_ts IS NULL"),
		insertOrder: insert("INSERT INTO t_order (product_id, user_eid, ticket_number, plate_number, start_ts, paid_until_ts, finish_ts, paid_amount, price)" +
			" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"),
		saveOrder: bind("UPDATE t_order SET paid_until_ts = ?, finish_ts = ?, paid_amount = ? WHERE id = ?"),
		paymentsByTrans: bind("SELECT " + prefixed("p", paymentCols) + ", " + prefixed("o", orderCols) + ", " + prefixed("c", consumeCols) +
			" FROM t_payment p JOIN t_order o ON o.id = p.order_id LEFT JOIN t_account_consume c ON c.dst_payment_id = p.id" +
			" WHERE p.trans_number = ?" + lockJoined),
		insertPayment: insert("INSERT INTO t_payment (trans_number, order_id, ts, hours, amount, payment_ts, cancel_ts)" +
			" VALUES (?, ?, ?, ?, ?, ?, ?)"),
		savePayment:        bind("UPDATE t_payment SET payment_ts = ?, cancel_ts = ? WHERE id = ?"),
		consumesOf:         bind("SELECT " + consumeCols + " FROM t_account_consume WHERE dst_payment_id = ?"),
		insertConsume:      insert("INSERT INTO t_account_consume (ts, account_id, dst_payment_id, amount, is_reserved) VALUES (?, ?, ?, ?, ?)"),
		confirmAccount:     bind("UPDATE t_account SET reserved = reserved - ?, balance = balance - ? WHERE id = ? AND reserved >= ? AND balance >= ?"),
		confirmConsume:     bind("UPDATE t_account_consume SET is_reserved = 0 WHERE id = ?"),
		releaseAccount:     bind("UPDATE t_account SET reserved = reserved - ? WHERE id = ?"),
		releaseConsume:     bind("UPDATE t_account_consume SET amount = 0, is_reserved = 0 WHERE id = ?"),
		accountsByUser:     bind("SELECT " + accountCols + " FROM t_account WHERE user_eid = ?"),
		lockAccountsByUser: bind("SELECT " + accountCols + " FROM t_account WHERE user_eid = ?" + lock),
		insertAccount:      insert("INSERT INTO t_account (user_eid, balance, reserved) VALUES (?, ?, ?)"),
		saveAccount:        bind("UPDATE t_account SET balance = ?, reserved = ? WHERE id = ?"),
		receiptsOf:         bind("SELECT " + receiptCols + " FROM t_account_receipt WHERE src_order_id = ?"),
		insertReceipt:      insert("INSERT INTO t_account_receipt (ts, account_id, src_order_id, amount) VALUES (?, ?, ?, ?)"),
		transfersByTrans:   bind("SELECT " + transferCols + " FROM t_account_transfer WHERE trans_number = ?" + lock),
		insertTransfer: insert("INSERT INTO t_account_transfer (ts, trans_number, src_account_id, dst_account_id, amount)" +
			" VALUES (?, ?, ?, ?, ?)"),
	}
}

// prefixed qualifies a column list with a table alias.
func prefixed(alias, cols string) string {
	return alias + "." + strings.ReplaceAll(cols, ", ", ", "+alias+".")
}

// dollarPlaceholders turns the ? placeholders of q into $1, $2, ….
func dollarPlaceholders(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

type txn struct {
	tx  *sql.Tx
	q   *queries
	ctx context.Context
	// Rows this call has locked or read along with its payment, by id: the
	// order of each payment, and each payment's consumes (possibly none).
	orders   map[int64]service.Order
	consumes map[int64][]service.Consume
}

func (t *txn) Commit() error   { return t.tx.Commit() }
func (t *txn) Rollback() error { return t.tx.Rollback() }

// pick chooses the locking or the plain form of a read.
func pick(lock bool, locking, plain string) string {
	if lock {
		return locking
	}
	return plain
}

// list runs a query and scans every row with scan.
func list[T any](t *txn, query string, scan func(*sql.Rows, *T) error, args ...any) ([]T, error) {
	rows, err := t.tx.QueryContext(t.ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func (t *txn) insert(query string, args ...any) (int64, error) {
	if t.q.returningID {
		var id int64
		err := t.tx.QueryRowContext(t.ctx, query, args...).Scan(&id)
		return id, err
	}
	res, err := t.tx.ExecContext(t.ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// exec runs an UPDATE that must touch exactly one row.
func (t *txn) exec(query string, args ...any) error {
	res, err := t.tx.ExecContext(t.ctx, query, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%d rows changed by %s", n, query)
	}
	return nil
}

func (t *txn) count(query string, args ...any) (int64, error) {
	var n int64
	err := t.tx.QueryRowContext(t.ctx, query, args...).Scan(&n)
	return n, err
}

func scanLot(r *sql.Rows, l *service.Lot) error {
	return r.Scan(&l.ID, &l.Name, &l.DisplayName, &l.PlacesAvail, &l.Price)
}

func scanOrder(r *sql.Rows, o *service.Order) error {
	return r.Scan(&o.ID, &o.LotID, &o.UserEID, &o.TicketNumber, &o.PlateNumber,
		&o.StartTS, &o.PaidUntilTS, &o.FinishTS, &o.PaidAmount, &o.Price)
}

func scanPayment(r *sql.Rows, p *service.Payment) error {
	return r.Scan(&p.ID, &p.TransNumber, &p.OrderID, &p.TS, &p.Hours, &p.Amount, &p.PaymentTS, &p.CancelTS)
}

func scanAccount(r *sql.Rows, a *service.Account) error {
	return r.Scan(&a.ID, &a.UserEID, &a.Balance, &a.Reserved)
}

func scanConsume(r *sql.Rows, c *service.Consume) error {
	return r.Scan(&c.ID, &c.TS, &c.AccountID, &c.DstPaymentID, &c.Amount, &c.IsReserved)
}

func scanReceipt(r *sql.Rows, x *service.Receipt) error {
	return r.Scan(&x.ID, &x.TS, &x.AccountID, &x.SrcOrderID, &x.Amount)
}

func scanTransfer(r *sql.Rows, x *service.Transfer) error {
	return r.Scan(&x.ID, &x.TS, &x.TransNumber, &x.SrcAccountID, &x.DstAccountID, &x.Amount)
}

func (t *txn) LotsByName(name string, lock bool) ([]service.Lot, error) {
	return list(t, pick(lock, t.q.lockLotsByName, t.q.lotsByName), scanLot, name)
}

func (t *txn) SaveLotPlaces(l *service.Lot) error {
	return t.exec(t.q.saveLotPlaces, l.PlacesAvail, l.ID)
}

func (t *txn) ChangePlaces(lotID, delta int64) error {
	return t.exec(t.q.changePlaces, delta, lotID)
}

// Order answers from the rows locked with a payment when it can.
func (t *txn) Order(id int64, lock bool) (service.Order, error) {
	if o, ok := t.orders[id]; ok {
		return o, nil
	}
	orders, err := list(t, pick(lock, t.q.lockOrder, t.q.order), scanOrder, id)
	if err == nil && len(orders) != 1 {
		err = fmt.Errorf("order %d: %d rows", id, len(orders))
	}
	if err != nil {
		return service.Order{}, err
	}
	return orders[0], nil
}

func (t *txn) OrdersByTicket(ticket string, lock bool) ([]service.Order, error) {
	return list(t, pick(lock, t.q.lockOrdersByTicket, t.q.ordersByTicket), scanOrder, ticket)
}

func (t *txn) OpenTicketOrders(lotID int64, ticket string) ([]service.Order, error) {
	return list(t, t.q.openTicketOrders, scanOrder, lotID, ticket)
}

func (t *txn) TicketTaken(ticket string) (bool, error) {
	n, err := t.count(t.q.ticketTaken, ticket)
	return n > 0, err
}

func (t *txn) CountPaidPlates(plate string, now time.Time) (int64, error) {
	return t.count(t.q.countPaidPlates, plate, now)
}

func (t *txn) InsertOrder(o *service.Order) (err error) {
	o.ID, err = t.insert(t.q.insertOrder, o.LotID, o.UserEID, o.TicketNumber, o.PlateNumber,
		o.StartTS, o.PaidUntilTS, o.FinishTS, o.PaidAmount, o.Price)
	return err
}

func (t *txn) SaveOrder(o *service.Order) error {
	if _, ok := t.orders[o.ID]; ok {
		t.orders[o.ID] = *o
	}
	return t.exec(t.q.saveOrder, o.PaidUntilTS, o.FinishTS, o.PaidAmount, o.ID)
}

// PaymentsByTrans locks the payments of a transaction id with their orders
// and reads their consumes, in one statement (a row per consume).
func (t *txn) PaymentsByTrans(trans string) ([]service.Payment, error) {
	rows, err := t.tx.QueryContext(t.ctx, t.q.paymentsByTrans, trans)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var payments []service.Payment
	for rows.Next() {
		var p service.Payment
		var o service.Order
		var c nullConsume
		err := rows.Scan(&p.ID, &p.TransNumber, &p.OrderID, &p.TS, &p.Hours, &p.Amount, &p.PaymentTS, &p.CancelTS,
			&o.ID, &o.LotID, &o.UserEID, &o.TicketNumber, &o.PlateNumber,
			&o.StartTS, &o.PaidUntilTS, &o.FinishTS, &o.PaidAmount, &o.Price,
			&c.ID, &c.TS, &c.AccountID, &c.DstPaymentID, &c.Amount, &c.IsReserved)
		if err != nil {
			return nil, err
		}
		if _, seen := t.consumes[p.ID]; !seen {
			payments = append(payments, p)
			t.consumes[p.ID] = nil
		}
		t.orders[o.ID] = o
		if c.ID != nil {
			t.consumes[p.ID] = append(t.consumes[p.ID], c.consume())
		}
	}
	return payments, rows.Err()
}

// nullConsume is the outer-joined side of PaymentsByTrans: all NULL for a
// payment without a consume.
type nullConsume struct {
	ID, AccountID, DstPaymentID, IsReserved *int64
	TS                                      *time.Time
	Amount                                  *rules.Amount
}

func (c nullConsume) consume() service.Consume {
	return service.Consume{ID: *c.ID, TS: *c.TS, AccountID: *c.AccountID, DstPaymentID: *c.DstPaymentID,
		Amount: *c.Amount, IsReserved: *c.IsReserved}
}

func (t *txn) InsertPayment(p *service.Payment) (err error) {
	p.ID, err = t.insert(t.q.insertPayment, p.TransNumber, p.OrderID, p.TS, p.Hours, p.Amount, p.PaymentTS, p.CancelTS)
	return err
}

func (t *txn) SavePayment(p *service.Payment) error {
	return t.exec(t.q.savePayment, p.PaymentTS, p.CancelTS, p.ID)
}

// ConsumesOf answers from the rows read with the payment when it can.
func (t *txn) ConsumesOf(paymentID int64) ([]service.Consume, error) {
	if consumes, ok := t.consumes[paymentID]; ok {
		return consumes, nil
	}
	return list(t, t.q.consumesOf, scanConsume, paymentID)
}

func (t *txn) InsertConsume(c *service.Consume) (err error) {
	c.ID, err = t.insert(t.q.insertConsume, c.TS, c.AccountID, c.DstPaymentID, c.Amount, c.IsReserved)
	return err
}

// SettleConsume changes the wallet without reading it first: the WHERE
// clause keeps RESERVED and BALANCE from going below zero, and no row
// changed means the check failed.
func (t *txn) SettleConsume(c service.Consume, confirmed bool) error {
	if confirmed {
		if err := t.exec(t.q.confirmAccount, c.Amount, c.Amount, c.AccountID, c.Amount, c.Amount); err != nil {
			return err
		}
		return t.exec(t.q.confirmConsume, c.ID)
	}
	if err := t.exec(t.q.releaseAccount, c.Amount, c.AccountID); err != nil {
		return err
	}
	return t.exec(t.q.releaseConsume, c.ID)
}

func (t *txn) AccountsByUser(user string, lock bool) ([]service.Account, error) {
	return list(t, pick(lock, t.q.lockAccountsByUser, t.q.accountsByUser), scanAccount, user)
}

func (t *txn) InsertAccount(a *service.Account) (err error) {
	a.ID, err = t.insert(t.q.insertAccount, a.UserEID, a.Balance, a.Reserved)
	return err
}

func (t *txn) SaveAccount(a *service.Account) error {
	return t.exec(t.q.saveAccount, a.Balance, a.Reserved, a.ID)
}

func (t *txn) ReceiptsOf(orderID int64) ([]service.Receipt, error) {
	return list(t, t.q.receiptsOf, scanReceipt, orderID)
}

func (t *txn) InsertReceipt(r *service.Receipt) (err error) {
	r.ID, err = t.insert(t.q.insertReceipt, r.TS, r.AccountID, r.SrcOrderID, r.Amount)
	return err
}

func (t *txn) TransfersByTrans(trans string) ([]service.Transfer, error) {
	return list(t, t.q.transfersByTrans, scanTransfer, trans)
}

func (t *txn) InsertTransfer(x *service.Transfer) (err error) {
	x.ID, err = t.insert(t.q.insertTransfer, x.TS, x.TransNumber, x.SrcAccountID, x.DstAccountID, x.Amount)
	return err
}
