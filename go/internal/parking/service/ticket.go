package service

import (
	"math/rand/v2"
	"strconv"
	"time"
)

// issueTicket lets a car into a postpaid lot (docs/studies/parking.md §7.8).
func issueTicket(c *call) (Answer, bool, error) {
	name := c.param("parking_id")
	if name == "" {
		return Answer{}, false, internal("no parking_id")
	}
	tx, err := c.db()
	if err != nil {
		return Answer{}, false, err
	}
	lots, err := tx.LotsByName(name, true)
	if err != nil {
		return Answer{}, false, err
	}
	if len(lots) != 1 || lots[0].PlacesAvail <= 0 {
		return early(Answer{Status: NotAvailable})
	}
	lot := lots[0]
	var ticket string
	for {
		ticket = strconv.FormatInt(1_000_000_000+rand.Int64N(1_000_000_000), 10)
		taken, err := tx.TicketTaken(ticket)
		if err != nil {
			return Answer{}, false, err
		}
		if !taken {
			break
		}
	}
	lot.PlacesAvail--
	if err := tx.SaveLotPlaces(&lot); err != nil {
		return Answer{}, false, err
	}
	rate := lot.Price
	order := &Order{LotID: lot.ID, TicketNumber: &ticket, StartTS: c.now, PaidUntilTS: c.now, Price: &rate}
	if err := tx.InsertOrder(order); err != nil {
		return Answer{}, false, err
	}
	return commit(Answer{Status: Success, Fields: []Field{
		{"user_ticket", ticket},
		{"available_places", lot.PlacesAvail},
	}})
}

// gracePeriod is how long after its paid time a ticket car may still leave.
const gracePeriod = 15 * time.Minute

// leaveParking lets a ticket car out (docs/studies/parking.md §7.9).
func leaveParking(c *call) (Answer, bool, error) {
	tx, err := c.db()
	if err != nil {
		return Answer{}, false, err
	}
	lots, err := tx.LotsByName(c.param("parking_id"), false)
	if err != nil {
		return Answer{}, false, err
	}
	if len(lots) != 1 {
		return early(Answer{Status: NotAvailable})
	}
	orders, err := tx.OpenTicketOrders(lots[0].ID, c.param("user_ticket"))
	if err != nil {
		return Answer{}, false, err
	}
	if len(orders) != 1 {
		return early(Answer{Status: NotAvailable})
	}
	order := orders[0]
	if order.PaidUntilTS.Equal(order.StartTS) || !c.now.Before(order.PaidUntilTS.Add(gracePeriod)) {
		return early(Answer{Status: NotEnoughPaid})
	}
	order.FinishTS = &c.now
	if err := tx.SaveOrder(&order); err != nil {
		return Answer{}, false, err
	}
	if err := tx.ChangePlaces(lots[0].ID, 1); err != nil {
		return Answer{}, false, err
	}
	return commit(Answer{Status: Success})
}

// checkPlateNumber tells whether a plate has paid time running
// (docs/studies/parking.md §7.10); it never writes and rolls back.
func checkPlateNumber(c *call) (Answer, bool, error) {
	plate := c.param("registration_plate")
	if plate == "" {
		return early(Answer{Status: NotAvailable})
	}
	tx, err := c.db()
	if err != nil {
		return Answer{}, false, err
	}
	n, err := tx.CountPaidPlates(plate, c.now)
	if err != nil {
		return Answer{}, false, err
	}
	paid := "false"
	if n >= 1 {
		paid = "true"
	}
	return early(Answer{Status: Success, Fields: []Field{{"paid", paid}}})
}
