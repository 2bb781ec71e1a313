package service

import (
	"math/big"
	"time"

	"stratabench.dev/go/internal/parking/rules"
)

// Status codes of get_service_info and create_reservation (docs/studies/parking.md §7.1–7.2).
const (
	codeUserID        = "invalid_user_id"
	codePlate         = "invalid_registration_plate"
	codeParkingID     = "invalid_parking_id"
	codeDuration      = "invalid_duration"
	codeTicketMissing = "user_ticket_not_found"
	codeTicketLeft    = "user_ticket_out_of_parking"
)

// Keys of service_descr by protocol version (docs/studies/parking.md §4).
func (c *call) parkingKey() string {
	if c.version == 0 {
		return "parking_object_id"
	}
	return "parking_id"
}

func (c *call) plateKey() string {
	if c.version == 0 {
		return "plate_number"
	}
	return "registration_plate"
}

// quote is what a price is made of: rounded minutes at a rate, and for a
// ticket its order.
type quote struct {
	minutes int64
	rate    rules.Amount
	ticket  *Order
}

func (q quote) price() *big.Rat { return rules.Price(q.rate, q.minutes) }

// findLot looks up the lot named in service_descr (docs/studies/parking.md §7.1 step 3).
// A nil lot with a nil error is a refusal already answered in *refusal.
func (c *call) findLot(tx Tx, lock bool) (*Lot, *Answer, error) {
	name, err := c.field(c.parkingKey())
	if err != nil {
		return nil, nil, err
	}
	lots, err := tx.LotsByName(name, lock)
	if err != nil {
		return nil, nil, err
	}
	if name == "" || len(lots) != 1 {
		a, _, err := c.refuse(NotAvailable, codeParkingID)
		return nil, &a, err
	}
	return &lots[0], nil, nil
}

// quoteFor computes minutes and rate (docs/studies/parking.md §7.1 step 4): from the ticket's
// unpaid time when service_descr has user_ticket, else from the duration
// asked for. A refusal comes back as an answer.
func (c *call) quoteFor(tx Tx, lot *Lot, lockTicket bool) (quote, *Answer, error) {
	if c.has("user_ticket") { // given, even empty or null: then it is looked up
		ticket, err := c.field("user_ticket")
		if err != nil {
			return quote{}, nil, err
		}
		return c.ticketQuote(tx, lot, ticket, lockTicket)
	}
	minutes, refusal, err := c.askedMinutes()
	if err != nil || refusal != nil {
		return quote{}, refusal, err
	}
	rounded, err := rules.RoundMinutes(minutes, true)
	return quote{minutes: rounded, rate: lot.Price}, nil, err
}

func (c *call) ticketQuote(tx Tx, lot *Lot, ticket string, lock bool) (quote, *Answer, error) {
	orders, err := tx.OrdersByTicket(ticket, lock)
	if err != nil {
		return quote{}, nil, err
	}
	code := ""
	switch {
	case len(orders) != 1:
		code = codeTicketMissing
	case orders[0].FinishTS != nil:
		code = codeTicketLeft
	case orders[0].LotID != lot.ID:
		code = codeTicketMissing
	}
	if code != "" {
		a, _, err := c.refuse(NotAvailable, code)
		return quote{}, &a, err
	}
	order := &orders[0]
	if order.Price == nil {
		return quote{}, nil, internal("ticket order %d has no rate", order.ID)
	}
	unpaid := max(rules.WholeSeconds(c.now.Sub(order.PaidUntilTS)), 0)
	firstHour := order.PaidUntilTS.Equal(order.StartTS)
	rounded, err := rules.RoundMinutes(unpaid/60, firstHour)
	return quote{minutes: rounded, rate: *order.Price, ticket: order}, nil, err
}

// askedMinutes is the prepaid duration: decimal `hours` in protocol 0,
// integer minutes in `duration` from protocol 1 on.
func (c *call) askedMinutes() (int64, *Answer, error) {
	if c.version == 0 {
		text, err := c.field("hours")
		if err != nil {
			return 0, nil, err
		}
		hours, err := rules.ParseDecimal(text)
		if err != nil {
			return 0, nil, internal("hours: %v", err)
		}
		m, err := rules.MinutesOfHours(hours)
		return m, nil, err
	}
	text, err := c.field("duration")
	if err != nil {
		return 0, nil, err
	}
	if text == "" {
		a, _, err := c.refuse(NotAvailable, codeDuration)
		return 0, &a, err
	}
	m, err := parseInt(text)
	if err != nil {
		return 0, nil, err
	}
	if m <= 0 {
		a, _, err := c.refuse(NotAvailable, codeDuration)
		return 0, &a, err
	}
	return m, nil, nil
}

// info is the `info` object of quotes and reservations (protocol ≥ 1 part).
func (c *call) info(q quote, ticketPaidMinutes int64, start time.Time) []Field {
	fields := []Field{{"start_ts", rules.StartTS(start)}, {"duration", q.minutes}}
	if q.ticket != nil {
		fields = append(fields, Field{"paid_duration", ticketPaidMinutes})
	}
	return fields
}

// getServiceInfo quotes a price (docs/studies/parking.md §7.1); it never writes and always
// rolls back.
func getServiceInfo(c *call) (Answer, bool, error) {
	if c.version >= 1 && c.param("user_id") == "" {
		return c.refuse(NotAvailable, codeUserID)
	}
	if c.version == 1 {
		if plate, err := c.field(c.plateKey()); err != nil || plate == "" {
			if err != nil {
				return Answer{}, false, err
			}
			return c.refuse(NotAvailable, codePlate)
		}
	}
	tx, err := c.db()
	if err != nil {
		return Answer{}, false, err
	}
	lot, refusal, err := c.findLot(tx, false)
	if err != nil || refusal != nil {
		return deref(refusal), false, err
	}
	q, refusal, err := c.quoteFor(tx, lot, false)
	if err != nil || refusal != nil {
		return deref(refusal), false, err
	}
	info := []Field{{"available_places", lot.PlacesAvail}}
	if c.version >= 1 {
		start, paid := c.now, int64(0)
		if q.ticket != nil {
			start = q.ticket.StartTS
			paid = rules.WholeMinutes(q.ticket.PaidUntilTS.Sub(q.ticket.StartTS))
		}
		info = append(info, c.info(q, paid, start)...)
	}
	if c.version == 2 {
		accounts, err := tx.AccountsByUser(c.param("user_id"), false)
		if err != nil {
			return Answer{}, false, err
		}
		balance := rules.Amount(0)
		if len(accounts) > 1 {
			return Answer{}, false, internal("%d accounts of one user", len(accounts))
		} else if len(accounts) == 1 {
			balance = accounts[0].Balance
		}
		info = append(info, Field{"balance", rules.Cents(balance.Rat())})
	}
	return early(Answer{Status: Success, Fields: []Field{
		{"price", rules.Cents(q.price())},
		{"info", info},
	}})
}

func deref(a *Answer) Answer {
	if a == nil {
		return Answer{}
	}
	return *a
}
