package service

import (
	"context"
	"time"

	"stratabench.dev/go/internal/parking/rules"
)

// The rows of the schema (docs/studies/parking.md §6), as the business logic sees them. The
// stores map them to tables: gormstore with GORM models, sqlstore by hand.

// Lot is a T_PRODUCT row: a parking lot.
type Lot struct {
	ID          int64
	Name        string
	DisplayName string
	PlacesAvail int64
	Price       rules.Amount // rate per hour
}

// Order is a T_ORDER row: one parking session, prepaid or by ticket.
type Order struct {
	ID           int64
	LotID        int64
	UserEID      *string // prepaid orders only
	TicketNumber *string // ticket orders only
	PlateNumber  *string // prepaid orders only
	StartTS      time.Time
	PaidUntilTS  time.Time
	FinishTS     *time.Time
	PaidAmount   rules.Amount
	Price        *rules.Amount // hourly rate copied at ticket issue
}

// IsTicket tells a postpaid (ticket) order from a prepaid one.
func (o *Order) IsTicket() bool { return o.TicketNumber != nil && *o.TicketNumber != "" }

// Payment is a T_PAYMENT row: one two-phase money movement to an order.
type Payment struct {
	ID          int64
	TransNumber string
	OrderID     int64
	TS          time.Time
	Hours       rules.Amount
	Amount      rules.Amount // the full price, wallet part included
	PaymentTS   *time.Time
	CancelTS    *time.Time
}

// Account is a T_ACCOUNT row: a user's wallet.
type Account struct {
	ID       int64
	UserEID  string
	Balance  rules.Amount // all money, reserved part included
	Reserved rules.Amount // promised to unconfirmed payments
}

// Receipt is a T_ACCOUNT_RECEIPT row: a refund into a wallet.
type Receipt struct {
	ID         int64
	TS         time.Time
	AccountID  int64
	SrcOrderID int64
	Amount     rules.Amount
}

// Consume is a T_ACCOUNT_CONSUME row: wallet money put towards a payment.
type Consume struct {
	ID           int64
	TS           time.Time
	AccountID    int64
	DstPaymentID int64
	Amount       rules.Amount
	IsReserved   int64
}

// Transfer is a T_ACCOUNT_TRANSFER row: a whole wallet moved to another.
type Transfer struct {
	ID           int64
	TS           time.Time
	TransNumber  string
	SrcAccountID int64
	DstAccountID int64
	Amount       rules.Amount
}

// Store opens one database transaction per API call (docs/studies/parking.md §5.4).
type Store interface {
	Begin(ctx context.Context) (Tx, error)
}

// Tx is the data access of one call. "lock" reads take SELECT … FOR UPDATE
// (docs/studies/parking.md §8). Methods that name an intent (ChangePlaces, SettleConsume) let
// each store choose its statements: the ORM store locks and saves rows, the
// SQL store may do the same work in fewer statements.
type Tx interface {
	Commit() error
	Rollback() error

	LotsByName(name string, lock bool) ([]Lot, error)
	// SaveLotPlaces writes PLACES_AVAIL of a lot this call has locked.
	SaveLotPlaces(lot *Lot) error
	// ChangePlaces adds delta to PLACES_AVAIL of a lot not yet locked.
	ChangePlaces(lotID int64, delta int64) error

	Order(id int64, lock bool) (Order, error)
	OrdersByTicket(ticket string, lock bool) ([]Order, error)
	// OpenTicketOrders locks the unfinished orders of a lot with a ticket.
	OpenTicketOrders(lotID int64, ticket string) ([]Order, error)
	TicketTaken(ticket string) (bool, error)
	CountPaidPlates(plate string, now time.Time) (int64, error)
	InsertOrder(o *Order) error
	SaveOrder(o *Order) error

	// PaymentsByTrans locks the payments with a transaction id.
	PaymentsByTrans(trans string) ([]Payment, error)
	InsertPayment(p *Payment) error
	SavePayment(p *Payment) error

	ConsumesOf(paymentID int64) ([]Consume, error)
	InsertConsume(c *Consume) error
	// SettleConsume ends a reservation of wallet money: confirmed, RESERVED
	// and BALANCE drop by the consume's amount (neither may go below zero);
	// cancelled, RESERVED drops and the consume's amount becomes 0.
	// IS_RESERVED becomes 0 either way.
	SettleConsume(c Consume, confirmed bool) error

	AccountsByUser(user string, lock bool) ([]Account, error)
	InsertAccount(a *Account) error
	SaveAccount(a *Account) error

	ReceiptsOf(orderID int64) ([]Receipt, error)
	InsertReceipt(r *Receipt) error

	// TransfersByTrans locks the transfers with a transaction id.
	TransfersByTrans(trans string) ([]Transfer, error)
	InsertTransfer(t *Transfer) error
}
