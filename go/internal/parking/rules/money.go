// Package rules holds the parking study's business arithmetic (docs/studies/parking.md §5):
// exact money, the quarter-hour rounding of durations, prices, refunds and
// the time formats of answers. Nothing here touches a database or HTTP.
package rules

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// Amount is money (or hours) as an exact integer count of millionths, the
// resolution of the schema's DECIMAL(16,6) columns. It is never a float.
type Amount int64

// AmountScale is the number of Amount units in one whole unit.
const AmountScale = 1_000_000

// decimalSyntax is what Python's Decimal accepts for finite numbers:
// optional sign, digits with an optional point, optional exponent.
var decimalSyntax = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// maxExponent bounds the exponent of parsed decimals so that "1e999999999"
// cannot make big.Rat allocate gigabytes; larger values are refused.
const maxExponent = 100

// ErrNotDecimal is returned for text that is not a finite decimal number.
var ErrNotDecimal = errors.New("not a decimal number")

// ParseDecimal reads a decimal the way Python's Decimal does for finite
// values (surrounding blanks allowed), exactly.
func ParseDecimal(s string) (*big.Rat, error) {
	s = strings.TrimSpace(s)
	if !decimalSyntax.MatchString(s) {
		return nil, fmt.Errorf("%q: %w", s, ErrNotDecimal)
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp, err := strconv.Atoi(s[i+1:])
		if err != nil || exp > maxExponent || exp < -maxExponent {
			return nil, fmt.Errorf("%q: exponent out of range: %w", s, ErrNotDecimal)
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%q: %w", s, ErrNotDecimal)
	}
	return r, nil
}

// Rat returns a as an exact rational number of whole units.
func (a Amount) Rat() *big.Rat {
	return new(big.Rat).SetFrac64(int64(a), AmountScale)
}

// ErrOutOfRange is returned for numbers an Amount cannot hold exactly.
var ErrOutOfRange = errors.New("number out of range")

// AmountOf converts r to an Amount, rounding half-to-even to the millionth
// (what a DECIMAL(16,6) column keeps); beyond ±10^12 it fails.
func AmountOf(r *big.Rat) (Amount, error) {
	scaled := new(big.Rat).Mul(r, big.NewRat(AmountScale, 1))
	n := roundHalfEven(scaled)
	if n.CmpAbs(big.NewInt(1_000_000_000_000*AmountScale)) > 0 {
		return 0, fmt.Errorf("%s: %w", r.FloatString(6), ErrOutOfRange)
	}
	return Amount(n.Int64()), nil
}

// AmountFromDB reads a money column's value as the drivers hand it over:
// decimal text from DECIMAL(16,6) (PostgreSQL, MariaDB), or an integer
// count of millionths from SQLite, which has no decimal type and keeps
// money in BIGINT micro-units (the suite's schema). A float, which no
// column should hold, is rounded to the millionth.
func AmountFromDB(v any) (Amount, error) {
	switch x := v.(type) {
	case int64:
		return Amount(x), nil
	case float64:
		r := new(big.Rat)
		if r.SetFloat64(x) == nil {
			return 0, fmt.Errorf("%v: %w", x, ErrNotDecimal)
		}
		return AmountOf(r)
	case []byte:
		return amountFromText(string(x))
	case string:
		return amountFromText(x)
	}
	return 0, fmt.Errorf("decimal column holds %T", v)
}

func amountFromText(s string) (Amount, error) {
	r, err := ParseDecimal(s)
	if err != nil {
		return 0, err
	}
	return AmountOf(r)
}

// DBText is a as the decimal literal bound to SQL parameters ("102.250000").
func (a Amount) DBText() string {
	return a.Rat().FloatString(6)
}

// Cents formats r with exactly two decimals, rounding half-to-even
// ("102.00", "-0.50"): money in every answer.
func Cents(r *big.Rat) string {
	cents := roundHalfEven(new(big.Rat).Mul(r, big.NewRat(100, 1)))
	sign := ""
	if cents.Sign() < 0 {
		sign = "-"
		cents.Neg(cents)
	}
	whole, frac := new(big.Int).QuoRem(cents, big.NewInt(100), new(big.Int))
	return fmt.Sprintf("%s%s.%02d", sign, whole.String(), frac.Int64())
}

// RoundToCents rounds r half-to-even to a whole number of cents.
func RoundToCents(r *big.Rat) *big.Rat {
	cents := roundHalfEven(new(big.Rat).Mul(r, big.NewRat(100, 1)))
	return new(big.Rat).SetFrac(cents, big.NewInt(100))
}

// roundHalfEven rounds r to the nearest integer, ties to even.
func roundHalfEven(r *big.Rat) *big.Int {
	num, den := r.Num(), r.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int)) // truncates toward zero
	twice := new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2))
	switch c := twice.Cmp(den); {
	case c > 0, c == 0 && q.Bit(0) == 1:
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// Scan reads a DECIMAL column (database/sql and GORM).
func (a *Amount) Scan(v any) error {
	x, err := AmountFromDB(v)
	*a = x
	return err
}

// Value binds a as exact decimal text.
func (a Amount) Value() (driver.Value, error) { return a.DBText(), nil }
