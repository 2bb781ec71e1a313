// Package service is the parking study's business logic (docs/studies/parking.md §4–§9): the
// ten API functions, their checks in the reference's order, their statuses
// and which calls commit. It reaches the database only through a Store, so
// the GORM and the database/sql servers run the very same logic.
package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"stratabench.dev/go/internal/parking/rules"
)

// Statuses of answers (docs/studies/parking.md §3).
const (
	Success        = "success"
	NotAvailable   = "not_available"
	WrongPrice     = "wrong_price"
	BadTransaction = "bad_transaction"
	BadProtocol    = "bad_protocol"
	NotEnoughPaid  = "not_enough_paid"
)

// Field is one key of an answer's JSON object, kept in order. Value is a
// string, an int64 or a nested []Field.
type Field struct {
	Key   string
	Value any
}

// Answer is a function's reply before the transport adds `ts`.
type Answer struct {
	Status string
	Code   string // status_code, empty when none
	Fields []Field
}

// ErrUnknownFunction and ErrBadDescr are the two failures the reference
// answers with HTTP 500 instead of a status.
var (
	ErrUnknownFunction = errors.New("unknown function")
	ErrBadDescr        = errors.New("service_descr is not valid JSON")
)

// Service runs API calls against a Store.
type Service struct {
	store Store
}

// New returns a Service on store.
func New(store Store) *Service { return &Service{store: store} }

type function struct {
	run           func(c *call) (Answer, bool, error)
	defaultStatus string // the answer to any unexpected failure
}

var functions = map[string]function{
	"get_service_info":   {getServiceInfo, NotAvailable},
	"create_reservation": {createReservation, NotAvailable},
	"pay_reservation":    {payReservation, BadTransaction},
	"cancel_reservation": {cancelReservation, BadTransaction},
	"stop_service":       {stopService, BadTransaction},
	"get_user_account":   {getUserAccount, BadTransaction},
	"account_transfer":   {accountTransfer, BadTransaction},
	"issue_ticket":       {issueTicket, NotAvailable},
	"leave_parking":      {leaveParking, NotAvailable},
	"check_plate_number": {checkPlateNumber, NotAvailable},
}

// Call runs function name with the query's parameters (already decoded,
// last value of a repeated key kept). Its error is ErrUnknownFunction or
// ErrBadDescr; every other failure is an answer.
func (s *Service) Call(ctx context.Context, name string, params map[string]string) (Answer, error) {
	fn, ok := functions[name]
	if !ok {
		return Answer{}, fmt.Errorf("%q: %w", name, ErrUnknownFunction)
	}
	c := &call{ctx: ctx, store: s.store, params: params, now: rules.Now()}
	if raw, ok := params["service_descr"]; ok {
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil || dec.More() {
			return Answer{}, ErrBadDescr
		}
		c.descr, c.descrMalformed = v.(map[string]any)
		c.descrMalformed = !c.descrMalformed
	}
	version, err := strconv.Atoi(strings.TrimSpace(paramOr(params, "version", "0")))
	if err != nil || version < 0 || version > 2 {
		return Answer{Status: BadProtocol}, nil
	}
	c.version = version
	answer, commit, err := fn.run(c)
	if err == nil && c.tx != nil && commit {
		err = c.tx.Commit()
		c.tx = nil
	}
	if c.tx != nil {
		if rbErr := c.tx.Rollback(); err == nil {
			err = rbErr
		}
	}
	if err != nil {
		return Answer{Status: fn.defaultStatus}, nil
	}
	return answer, nil
}

func paramOr(params map[string]string, key, absent string) string {
	if v, ok := params[key]; ok {
		return v
	}
	return absent
}

// call is the state of one API call: its parameters and its transaction,
// begun on the first database access (calls refused before that open none).
type call struct {
	ctx            context.Context
	store          Store
	tx             Tx
	params         map[string]string
	descr          map[string]any
	descrMalformed bool // service_descr is JSON but not an object
	version        int
	now            time.Time
}

func (c *call) db() (Tx, error) {
	if c.tx == nil {
		tx, err := c.store.Begin(c.ctx)
		if err != nil {
			return nil, err
		}
		c.tx = tx
	}
	return c.tx, nil
}

// errInternal marks a failed internal check: the function's default status.
var errInternal = errors.New("internal check failed")

func internal(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errInternal, fmt.Sprintf(format, args...))
}

// commit answers and commits; early answers and rolls back (docs/studies/parking.md §5.4).
func commit(a Answer) (Answer, bool, error) { return a, true, nil }
func early(a Answer) (Answer, bool, error)  { return a, false, nil }

// refuse is a business refusal with a status code. get_service_info and
// create_reservation send codes only from protocol 1 on; with protocol 0
// the same check is an internal error (plain default status).
func (c *call) refuse(status, code string) (Answer, bool, error) {
	if c.version == 0 {
		return Answer{}, false, internal("%s/%s with protocol 0", status, code)
	}
	return early(Answer{Status: status, Code: code})
}

// param is a query parameter, "" when absent.
func (c *call) param(key string) string { return c.params[key] }

// field is a key of service_descr as text, as Python's str() gives it:
// strings as they are, numbers as written (an integral number as an
// integer), booleans as True/False, absent or null as "".
func (c *call) field(key string) (string, error) {
	if c.descrMalformed {
		return "", internal("service_descr is not an object")
	}
	switch v := c.descr[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case bool:
		if v {
			return "True", nil
		}
		return "False", nil
	case json.Number:
		if r, ok := new(big.Rat).SetString(v.String()); ok && r.IsInt() && len(v.String()) < 40 {
			return r.Num().String(), nil
		}
		return v.String(), nil
	default:
		return "", internal("service_descr %s is a %T", key, v)
	}
}

// has tells whether service_descr holds key at all (even as null).
func (c *call) has(key string) bool {
	_, ok := c.descr[key]
	return ok
}

// user is a user id parameter: present, even empty, it names a wallet
// (the reference creates one for ""); absent, it is an internal error.
func (c *call) user(key string) (string, error) {
	user, ok := c.params[key]
	if !ok {
		return "", internal("no %s", key)
	}
	return user, nil
}

// parseInt reads an integer as Python's int() does for plain text. An
// integer too large for int64 fails with rules.ErrOutOfRange (Python's
// integers have no bound; such a duration can only be refused).
func parseInt(s string) (int64, error) {
	text := strings.TrimSpace(s)
	n, err := strconv.ParseInt(text, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		if strings.HasPrefix(text, "-") {
			return math.MinInt64, nil
		}
		return 0, fmt.Errorf("%w: %s", rules.ErrOutOfRange, text)
	}
	if err != nil {
		return 0, internal("%q is not an integer", s)
	}
	return n, nil
}
