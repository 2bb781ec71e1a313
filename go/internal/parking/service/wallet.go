package service

import (
	"stratabench.dev/go/internal/parking/rules"
)

// Status codes of account_transfer (docs/studies/parking.md §7.7), sent for every protocol.
const (
	codeSameAccount   = "same_src_and_dst"
	codeOtherTransfer = "another_trans_exists"
	codeAlreadyDone   = "already_done"
	codeNothing       = "nothing_to_transfer"
	codeReserved      = "reserved_funds_present"
)

// stopService ends a prepaid session early and refunds the unused whole
// quarter-hours into the user's wallet (docs/studies/parking.md §7.5).
func stopService(c *call) (Answer, bool, error) {
	tx, payment, err := lockPayment(c)
	if err != nil {
		return Answer{}, false, err
	}
	if payment.PaymentTS == nil || payment.CancelTS != nil {
		return Answer{}, false, internal("payment %d is not paid or is cancelled", payment.ID)
	}
	order, err := tx.Order(payment.OrderID, true)
	if err != nil {
		return Answer{}, false, err
	}
	if order.IsTicket() {
		return Answer{}, false, internal("order %d is a ticket's", order.ID)
	}
	receipts, err := tx.ReceiptsOf(order.ID)
	if err != nil {
		return Answer{}, false, err
	}
	if len(receipts) > 0 { // stopped before: the same refund again
		return commit(refunded(receipts[0].Amount))
	}
	if !c.now.Before(order.PaidUntilTS) {
		return commit(refunded(0))
	}
	refund, err := rules.Refund(order.PaidAmount, order.StartTS, order.PaidUntilTS, c.now)
	if err != nil {
		return Answer{}, false, internal("%v", err)
	}
	amount, err := rules.AmountOf(refund)
	if err != nil {
		return Answer{}, false, err
	}
	if amount > order.PaidAmount {
		return Answer{}, false, internal("refund %s exceeds the %s paid", rules.Cents(refund), rules.Cents(order.PaidAmount.Rat()))
	}
	if order.UserEID == nil {
		return Answer{}, false, internal("order %d has no user", order.ID)
	}
	account, err := lockAccount(tx, *order.UserEID)
	if err != nil {
		return Answer{}, false, err
	}
	account.Balance += amount
	if err := tx.SaveAccount(&account); err != nil {
		return Answer{}, false, err
	}
	order.PaidAmount -= amount
	order.PaidUntilTS = c.now
	// The order stays open and its place is not returned: the reference's
	// leak, kept so that statement counts compare (docs/studies/parking.md §12).
	if err := tx.SaveOrder(&order); err != nil {
		return Answer{}, false, err
	}
	receipt := &Receipt{TS: c.now, AccountID: account.ID, SrcOrderID: order.ID, Amount: amount}
	if err := tx.InsertReceipt(receipt); err != nil {
		return Answer{}, false, err
	}
	return commit(refunded(amount))
}

func refunded(amount rules.Amount) Answer {
	return Answer{Status: Success, Fields: []Field{{"delta_amount", rules.Cents(amount.Rat())}}}
}

// getUserAccount answers a wallet's balance, 0.00 without a wallet
// (docs/studies/parking.md §7.6). It commits.
func getUserAccount(c *call) (Answer, bool, error) {
	tx, err := c.db()
	if err != nil {
		return Answer{}, false, err
	}
	accounts, err := tx.AccountsByUser(c.param("user_id"), false)
	if err != nil {
		return Answer{}, false, err
	}
	if len(accounts) > 1 {
		return Answer{}, false, internal("%d wallets of one user", len(accounts))
	}
	balance := rules.Amount(0)
	if len(accounts) == 1 {
		balance = accounts[0].Balance
	}
	return commit(Answer{Status: Success, Fields: []Field{{"balance", rules.Cents(balance.Rat())}}})
}

// accountTransfer moves a whole wallet to another user (docs/studies/parking.md §7.7). Its
// refusals roll back the wallets it created on the way.
func accountTransfer(c *call) (Answer, bool, error) {
	tx, err := c.db()
	if err != nil {
		return Answer{}, false, err
	}
	srcUser, err := c.user("src_user_id")
	if err != nil {
		return Answer{}, false, err
	}
	src, err := lockAccount(tx, srcUser)
	if err != nil {
		return Answer{}, false, err
	}
	dstUser, err := c.user("dst_user_id")
	if err != nil {
		return Answer{}, false, err
	}
	dst, err := lockAccount(tx, dstUser)
	if err != nil {
		return Answer{}, false, err
	}
	if src.ID == dst.ID {
		return early(Answer{Status: BadTransaction, Code: codeSameAccount})
	}
	trans := c.param("transaction_id")
	transfers, err := tx.TransfersByTrans(trans)
	if err != nil {
		return Answer{}, false, err
	}
	if len(transfers) > 0 {
		for _, t := range transfers {
			if t.SrcAccountID != src.ID || t.DstAccountID != dst.ID {
				return early(Answer{Status: BadTransaction, Code: codeOtherTransfer})
			}
		}
		return early(Answer{Status: Success, Code: codeAlreadyDone})
	}
	if src.Balance <= 0 {
		return early(Answer{Status: Success, Code: codeNothing})
	}
	if src.Reserved != 0 {
		return early(Answer{Status: NotAvailable, Code: codeReserved})
	}
	amount := src.Balance
	transfer := &Transfer{TS: c.now, TransNumber: trans, SrcAccountID: src.ID, DstAccountID: dst.ID, Amount: amount}
	if err := tx.InsertTransfer(transfer); err != nil {
		return Answer{}, false, err
	}
	src.Balance -= amount
	dst.Balance += amount
	if err := tx.SaveAccount(&src); err != nil {
		return Answer{}, false, err
	}
	if err := tx.SaveAccount(&dst); err != nil {
		return Answer{}, false, err
	}
	return commit(Answer{Status: Success})
}
