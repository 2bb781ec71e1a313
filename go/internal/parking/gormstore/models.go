package gormstore

import (
	"time"

	"stratabench.dev/go/internal/parking/rules"
)

// The mapped structs: one per table, with the fields of the service's rows
// and their columns in tags, so that a *service.Order converts to an
// *order (and back) without a copy: GORM reads into and writes from the
// service's own rows.

type lot struct {
	ID          int64        `gorm:"column:id;primaryKey"`
	Name        string       `gorm:"column:name"`
	DisplayName string       `gorm:"column:display_name"`
	PlacesAvail int64        `gorm:"column:places_avail"`
	Price       rules.Amount `gorm:"column:price"`
}

func (lot) TableName() string { return "t_product" }

type order struct {
	ID           int64         `gorm:"column:id;primaryKey"`
	LotID        int64         `gorm:"column:product_id"`
	UserEID      *string       `gorm:"column:user_eid"`
	TicketNumber *string       `gorm:"column:ticket_number"`
	PlateNumber  *string       `gorm:"column:plate_number"`
	StartTS      time.Time     `gorm:"column:start_ts"`
	PaidUntilTS  time.Time     `gorm:"column:paid_until_ts"`
	FinishTS     *time.Time    `gorm:"column:finish_ts"`
	PaidAmount   rules.Amount  `gorm:"column:paid_amount"`
	Price        *rules.Amount `gorm:"column:price"`
}

func (order) TableName() string { return "t_order" }

type payment struct {
	ID          int64        `gorm:"column:id;primaryKey"`
	TransNumber string       `gorm:"column:trans_number"`
	OrderID     int64        `gorm:"column:order_id"`
	TS          time.Time    `gorm:"column:ts"`
	Hours       rules.Amount `gorm:"column:hours"`
	Amount      rules.Amount `gorm:"column:amount"`
	PaymentTS   *time.Time   `gorm:"column:payment_ts"`
	CancelTS    *time.Time   `gorm:"column:cancel_ts"`
}

func (payment) TableName() string { return "t_payment" }

type account struct {
	ID       int64        `gorm:"column:id;primaryKey"`
	UserEID  string       `gorm:"column:user_eid"`
	Balance  rules.Amount `gorm:"column:balance"`
	Reserved rules.Amount `gorm:"column:reserved"`
}

func (account) TableName() string { return "t_account" }

type receipt struct {
	ID         int64        `gorm:"column:id;primaryKey"`
	TS         time.Time    `gorm:"column:ts"`
	AccountID  int64        `gorm:"column:account_id"`
	SrcOrderID int64        `gorm:"column:src_order_id"`
	Amount     rules.Amount `gorm:"column:amount"`
}

func (receipt) TableName() string { return "t_account_receipt" }

type consume struct {
	ID           int64        `gorm:"column:id;primaryKey"`
	TS           time.Time    `gorm:"column:ts"`
	AccountID    int64        `gorm:"column:account_id"`
	DstPaymentID int64        `gorm:"column:dst_payment_id"`
	Amount       rules.Amount `gorm:"column:amount"`
	IsReserved   int64        `gorm:"column:is_reserved"`
}

func (consume) TableName() string { return "t_account_consume" }

type transfer struct {
	ID           int64        `gorm:"column:id;primaryKey"`
	TS           time.Time    `gorm:"column:ts"`
	TransNumber  string       `gorm:"column:trans_number"`
	SrcAccountID int64        `gorm:"column:src_account_id"`
	DstAccountID int64        `gorm:"column:dst_account_id"`
	Amount       rules.Amount `gorm:"column:amount"`
}

func (transfer) TableName() string { return "t_account_transfer" }
