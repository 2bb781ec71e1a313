package service

import (
	"errors"
	"unicode/utf8"

	"stratabench.dev/go/internal/parking/rules"
)

// createReservation creates a payment for a quoted price (docs/studies/parking.md §7.2).
func createReservation(c *call) (Answer, bool, error) {
	user := c.param("user_id")
	if c.version >= 1 && user == "" {
		return c.refuse(NotAvailable, codeUserID)
	}
	plate, err := c.field(c.plateKey())
	if err != nil {
		return Answer{}, false, err
	}
	if c.version >= 1 && plate == "" {
		return c.refuse(NotAvailable, codePlate)
	}
	if c.version == 0 && !c.has("user_ticket") && !c.has(c.plateKey()) {
		return Answer{}, false, internal("no plate_number and no user_ticket")
	}
	tx, err := c.db()
	if err != nil {
		return Answer{}, false, err
	}
	lot, refusal, err := c.findLot(tx, true)
	if err != nil || refusal != nil {
		return deref(refusal), false, err
	}
	price, err := rules.ParseDecimal(c.param("price"))
	if err != nil {
		return Answer{}, false, internal("price: %v", err)
	}
	fromBalance := rules.Amount(0)
	if text := c.param("pay_from_balance"); text != "" {
		r, err := rules.ParseDecimal(text)
		if err != nil {
			return Answer{}, false, internal("pay_from_balance: %v", err)
		}
		if r.Sign() < 0 || r.Cmp(price) > 0 {
			return early(Answer{Status: WrongPrice})
		}
		if fromBalance, err = rules.AmountOf(r); err != nil || fromBalance.Rat().Cmp(r) != 0 {
			return Answer{}, false, internal("pay_from_balance %s is finer than a millionth", text)
		}
	}
	trans := c.param("transaction_id")
	if n := utf8.RuneCountInString(trans); n < 4 || n > 64 {
		return early(Answer{Status: BadTransaction})
	}
	payments, err := tx.PaymentsByTrans(trans)
	if err != nil {
		return Answer{}, false, err
	}
	if len(payments) > 1 {
		return early(Answer{Status: BadTransaction})
	}
	if len(payments) == 1 {
		// Idempotency: the same id, amount and lot is the same reservation.
		order, err := tx.Order(payments[0].OrderID, false)
		if err != nil {
			return Answer{}, false, err
		}
		if payments[0].Amount.Rat().Cmp(price) == 0 && order.LotID == lot.ID {
			return early(Answer{Status: Success})
		}
		return early(Answer{Status: BadTransaction})
	}
	q, refusal, err := c.quoteFor(tx, lot, true)
	if errors.Is(err, rules.ErrOutOfRange) {
		// A price for more minutes than an int64 holds equals no price sent.
		return early(Answer{Status: WrongPrice})
	}
	if err != nil || refusal != nil {
		return deref(refusal), false, err
	}
	if price.Cmp(q.price()) != 0 {
		return early(Answer{Status: WrongPrice})
	}
	if lot.PlacesAvail <= 0 {
		return early(Answer{Status: NotAvailable})
	}
	amount, err := rules.AmountOf(q.price())
	if err != nil {
		return Answer{}, false, err
	}
	order := q.ticket
	if order == nil {
		order = &Order{LotID: lot.ID, UserEID: nonEmpty(user), PlateNumber: nonEmpty(plate),
			StartTS: c.now, PaidUntilTS: c.now}
		if err := tx.InsertOrder(order); err != nil {
			return Answer{}, false, err
		}
	}
	// The payment is stored with its full amount at once; the reference
	// inserts amount − pay_from_balance and adds it back in an UPDATE.
	payment := &Payment{TransNumber: trans, OrderID: order.ID, TS: c.now,
		Hours: rules.HoursOf(q.minutes), Amount: amount}
	if err := tx.InsertPayment(payment); err != nil {
		return Answer{}, false, err
	}
	if fromBalance > 0 {
		walletUser, err := c.user("user_id")
		if err != nil {
			return Answer{}, false, err
		}
		if err := reserveFromWallet(c, tx, walletUser, payment, fromBalance); err != nil {
			return Answer{}, false, err
		}
	}
	answer := Answer{Status: Success}
	if c.version >= 1 {
		answer.Fields = []Field{
			{"price", rules.Cents(amount.Rat())},
			{"info", c.info(q, 0, order.StartTS)},
		}
	}
	return commit(answer)
}

// reserveFromWallet puts part of a payment on the user's wallet: a consume
// marked reserved, and RESERVED raised until the payment is paid or
// cancelled (docs/studies/parking.md §7.2 step 12).
func reserveFromWallet(c *call, tx Tx, user string, payment *Payment, amount rules.Amount) error {
	account, err := lockAccount(tx, user)
	if err != nil {
		return err
	}
	if account.Balance-account.Reserved < amount {
		return internal("wallet of %q holds %s available, %s asked", user,
			rules.Cents((account.Balance - account.Reserved).Rat()), rules.Cents(amount.Rat()))
	}
	consume := &Consume{TS: c.now, AccountID: account.ID, DstPaymentID: payment.ID,
		Amount: amount, IsReserved: 1}
	if err := tx.InsertConsume(consume); err != nil {
		return err
	}
	account.Reserved += amount
	return tx.SaveAccount(&account)
}

// lockAccount locks the wallet of user, creating an empty one if there is
// none (docs/studies/parking.md §7.11).
func lockAccount(tx Tx, user string) (Account, error) {
	accounts, err := tx.AccountsByUser(user, true)
	if err != nil {
		return Account{}, err
	}
	switch len(accounts) {
	case 0:
		account := Account{UserEID: user}
		err := tx.InsertAccount(&account)
		return account, err
	case 1:
		return accounts[0], nil
	}
	return Account{}, internal("%d wallets of user %q", len(accounts), user)
}

// lockPayment locks the one payment of transaction_id; a missing one is
// an internal error, whose default status is bad_transaction.
func lockPayment(c *call) (Tx, Payment, error) {
	tx, err := c.db()
	if err != nil {
		return nil, Payment{}, err
	}
	payments, err := tx.PaymentsByTrans(c.param("transaction_id"))
	if err != nil {
		return nil, Payment{}, err
	}
	if len(payments) != 1 {
		return nil, Payment{}, internal("%d payments with transaction id %q", len(payments), c.param("transaction_id"))
	}
	return tx, payments[0], nil
}

// payReservation confirms a payment (docs/studies/parking.md §7.3).
func payReservation(c *call) (Answer, bool, error) {
	tx, payment, err := lockPayment(c)
	if err != nil {
		return Answer{}, false, err
	}
	if payment.PaymentTS != nil {
		return early(Answer{Status: Success})
	}
	if payment.CancelTS != nil {
		return early(Answer{Status: BadTransaction})
	}
	order, err := tx.Order(payment.OrderID, true)
	if err != nil {
		return Answer{}, false, err
	}
	payment.PaymentTS = &c.now
	order.PaidAmount += payment.Amount
	order.PaidUntilTS = order.PaidUntilTS.Add(rules.SecondsOfHours(payment.Hours))
	if err := saveBoth(tx, &order, &payment); err != nil {
		return Answer{}, false, err
	}
	if !order.IsTicket() && c.now.Before(order.PaidUntilTS) {
		// The car now takes a place; a ticket took its place at issue.
		if err := tx.ChangePlaces(order.LotID, -1); err != nil {
			return Answer{}, false, err
		}
	}
	if err := settleConsumes(tx, payment, true); err != nil {
		return Answer{}, false, err
	}
	return commit(Answer{Status: Success})
}

// cancelReservation cancels a payment (docs/studies/parking.md §7.4).
func cancelReservation(c *call) (Answer, bool, error) {
	tx, payment, err := lockPayment(c)
	if err != nil {
		return Answer{}, false, err
	}
	if payment.CancelTS != nil {
		return early(Answer{Status: Success})
	}
	order, err := tx.Order(payment.OrderID, true)
	if err != nil {
		return Answer{}, false, err
	}
	payment.CancelTS = &c.now
	freePlace := false
	if payment.PaymentTS != nil {
		order.PaidAmount -= payment.Amount
		order.PaidUntilTS = order.PaidUntilTS.Add(-rules.SecondsOfHours(payment.Hours))
		if !order.IsTicket() && !c.now.Before(order.PaidUntilTS) {
			order.FinishTS = &c.now
			freePlace = true
		}
	} else {
		// An unpaid reservation closes its order, a ticket's too.
		order.FinishTS = &c.now
	}
	if err := saveBoth(tx, &order, &payment); err != nil {
		return Answer{}, false, err
	}
	if freePlace {
		if err := tx.ChangePlaces(order.LotID, 1); err != nil {
			return Answer{}, false, err
		}
	}
	if err := settleConsumes(tx, payment, false); err != nil {
		return Answer{}, false, err
	}
	return commit(Answer{Status: Success})
}

func saveBoth(tx Tx, order *Order, payment *Payment) error {
	if err := tx.SaveOrder(order); err != nil {
		return err
	}
	return tx.SavePayment(payment)
}

// settleConsumes confirms or releases the wallet part of a payment, if any.
func settleConsumes(tx Tx, payment Payment, confirmed bool) error {
	consumes, err := tx.ConsumesOf(payment.ID)
	if err != nil {
		return err
	}
	if len(consumes) > 1 {
		return internal("payment %d has %d consumes", payment.ID, len(consumes))
	}
	if len(consumes) == 1 {
		return tx.SettleConsume(consumes[0], confirmed)
	}
	return nil
}

// nonEmpty is s for a nullable column: NULL when empty.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
