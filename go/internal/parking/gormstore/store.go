// Package gormstore is the parking data layer on the GORM ORM, shaped as
// the study's ORM server: mapped structs, rows read with clause.Locking
// (SELECT … FOR UPDATE), changed rows written back whole with Save, and one
// transaction per call.
package gormstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/glebarez/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"

	"stratabench.dev/go/internal/parking/database"
	"stratabench.dev/go/internal/parking/service"
)

// Store runs each call in a GORM transaction.
type Store struct {
	db *gorm.DB
}

// New returns a Store on an open (traced) connection pool.
func New(conn *sql.DB, d database.Dialect) (*Store, error) {
	var dialector gorm.Dialector
	switch d {
	case database.SQLite:
		dialector = sqlite.Dialector{Conn: conn}
	case database.PostgreSQL:
		dialector = postgres.New(postgres.Config{Conn: conn})
	case database.MySQL:
		dialector = mysql.New(mysql.Config{Conn: conn, SkipInitializeWithVersion: true})
	default:
		return nil, fmt.Errorf("unknown database %q", d)
	}
	db, err := gorm.Open(dialector, &gorm.Config{
		SkipDefaultTransaction: true, // every call already runs in its own
		Logger:                 logger.Discard,
	})
	if err != nil {
		return nil, fmt.Errorf("GORM on %s: %w", d, err)
	}
	return &Store{db: db}, nil
}

// Begin starts the transaction of one call.
func (s *Store) Begin(ctx context.Context) (service.Tx, error) {
	tx := s.db.WithContext(ctx).Begin()
	if tx.Error != nil {
		return nil, tx.Error
	}
	return &txn{db: tx}, nil
}

type txn struct {
	db *gorm.DB
}

func (t *txn) Commit() error   { return t.db.Commit().Error }
func (t *txn) Rollback() error { return t.db.Rollback().Error }

// read is a query on the transaction, locking its rows when lock is set.
func (t *txn) read(lock bool) *gorm.DB {
	if lock {
		return t.db.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
	}
	return t.db
}

// find returns the rows of model M matching a condition as service rows R.
func find[M any, R any](db *gorm.DB, convert func(M) R, query string, args ...any) ([]R, error) {
	var models []M
	if err := db.Where(query, args...).Find(&models).Error; err != nil {
		return nil, err
	}
	rows := make([]R, len(models))
	for i, m := range models {
		rows[i] = convert(m)
	}
	return rows, nil
}

func (t *txn) LotsByName(name string, lock bool) ([]service.Lot, error) {
	return find(t.read(lock), func(m lot) service.Lot { return service.Lot(m) }, "name = ?", name)
}

func (t *txn) SaveLotPlaces(l *service.Lot) error {
	return t.db.Save((*lot)(l)).Error
}

// ChangePlaces locks the lot, then saves it with the new count.
func (t *txn) ChangePlaces(lotID, delta int64) error {
	var m lot
	if err := t.read(true).Take(&m, "id = ?", lotID).Error; err != nil {
		return err
	}
	m.PlacesAvail += delta
	return t.db.Save(&m).Error
}

func (t *txn) Order(id int64, lock bool) (service.Order, error) {
	var o service.Order
	err := t.read(lock).Take((*order)(&o), "id = ?", id).Error
	return o, err
}

func toOrder(m order) service.Order { return service.Order(m) }

func (t *txn) OrdersByTicket(ticket string, lock bool) ([]service.Order, error) {
	return find(t.read(lock), toOrder, "ticket_number = ?", ticket)
}

func (t *txn) OpenTicketOrders(lotID int64, ticket string) ([]service.Order, error) {
	return find(t.read(true), toOrder, "product_id = ? AND ticket_number = ? AND finish_ts IS NULL", lotID, ticket)
}

func (t *txn) TicketTaken(ticket string) (bool, error) {
	var n int64
	err := t.db.Model(&order{}).Where("ticket_number = ?", ticket).Count(&n).Error
	return n > 0, err
}

func (t *txn) CountPaidPlates(plate string, now time.Time) (int64, error) {
	var n int64
	err := t.db.Model(&order{}).
		Where("plate_number = ? AND paid_until_ts > ? AND finish_ts IS NULL", plate, now).
		Count(&n).Error
	return n, err
}

func (t *txn) InsertOrder(o *service.Order) error {
	return t.db.Create((*order)(o)).Error
}

func (t *txn) SaveOrder(o *service.Order) error {
	return t.db.Save((*order)(o)).Error
}

func (t *txn) PaymentsByTrans(trans string) ([]service.Payment, error) {
	return find(t.read(true), func(m payment) service.Payment { return service.Payment(m) }, "trans_number = ?", trans)
}

func (t *txn) InsertPayment(p *service.Payment) error {
	return t.db.Create((*payment)(p)).Error
}

func (t *txn) SavePayment(p *service.Payment) error {
	return t.db.Save((*payment)(p)).Error
}

func (t *txn) ConsumesOf(paymentID int64) ([]service.Consume, error) {
	return find(t.db, func(m consume) service.Consume { return service.Consume(m) }, "dst_payment_id = ?", paymentID)
}

func (t *txn) InsertConsume(c *service.Consume) error {
	return t.db.Create((*consume)(c)).Error
}

// SettleConsume locks the wallet and the consume, changes both in memory
// and saves them, as the reference's ORM code does.
func (t *txn) SettleConsume(c service.Consume, confirmed bool) error {
	var a account
	if err := t.read(true).Take(&a, "id = ?", c.AccountID).Error; err != nil {
		return err
	}
	var m consume
	if err := t.read(true).Take(&m, "id = ?", c.ID).Error; err != nil {
		return err
	}
	a.Reserved -= m.Amount
	if confirmed {
		a.Balance -= m.Amount
	} else {
		m.Amount = 0
	}
	if a.Reserved < 0 || a.Balance < 0 {
		return fmt.Errorf("wallet %d would go below zero", a.ID)
	}
	m.IsReserved = 0
	if err := t.db.Save(&a).Error; err != nil {
		return err
	}
	return t.db.Save(&m).Error
}

func (t *txn) AccountsByUser(user string, lock bool) ([]service.Account, error) {
	return find(t.read(lock), func(m account) service.Account { return service.Account(m) }, "user_eid = ?", user)
}

func (t *txn) InsertAccount(a *service.Account) error {
	return t.db.Create((*account)(a)).Error
}

func (t *txn) SaveAccount(a *service.Account) error {
	return t.db.Save((*account)(a)).Error
}

func (t *txn) ReceiptsOf(orderID int64) ([]service.Receipt, error) {
	return find(t.db, func(m receipt) service.Receipt { return service.Receipt(m) }, "src_order_id = ?", orderID)
}

func (t *txn) InsertReceipt(r *service.Receipt) error {
	return t.db.Create((*receipt)(r)).Error
}

func (t *txn) TransfersByTrans(trans string) ([]service.Transfer, error) {
	return find(t.read(true), func(m transfer) service.Transfer { return service.Transfer(m) }, "trans_number = ?", trans)
}

func (t *txn) InsertTransfer(x *service.Transfer) error {
	return t.db.Create((*transfer)(x)).Error
}
