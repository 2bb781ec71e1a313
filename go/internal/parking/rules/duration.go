package rules

import (
	"errors"
	"fmt"
	"math/big"
	"time"
)

// QuarterHour is the billing step: every duration is rounded up to it.
const QuarterHour = 15

// ErrNegativeDuration is the internal error of rounding a negative time.
var ErrNegativeDuration = errors.New("negative duration")

// maxMinutes bounds a quoted duration (a million years) so that prices
// stay far inside an Amount; larger quotes are internal errors.
const maxMinutes = 1_000_000 * 366 * 24 * 60

// RoundMinutes applies the quarter-hour rule of docs/studies/parking.md §5.2 to whole minutes:
// a started first period is charged (0 becomes 1 when firstHour), then the
// minutes are rounded up to a multiple of 15.
func RoundMinutes(minutes int64, firstHour bool) (int64, error) {
	if minutes < 0 {
		return 0, fmt.Errorf("%d minutes: %w", minutes, ErrNegativeDuration)
	}
	if minutes > maxMinutes {
		return 0, fmt.Errorf("%d minutes: %w", minutes, ErrOutOfRange)
	}
	if minutes == 0 && firstHour {
		minutes = 1
	}
	return (minutes + QuarterHour - 1) / QuarterHour * QuarterHour, nil
}

// MinutesOfHours is floor(hours × 60) for the decimal hours of protocol 0.
func MinutesOfHours(hours *big.Rat) (int64, error) {
	m := new(big.Rat).Mul(hours, big.NewRat(60, 1))
	q := new(big.Int).Div(m.Num(), m.Denom()) // Euclidean: floor for a positive divisor
	if !q.IsInt64() {
		return 0, fmt.Errorf("%s hours: %w", hours.FloatString(2), ErrOutOfRange)
	}
	return q.Int64(), nil
}

// Price is rate × minutes / 60, exact (docs/studies/parking.md §5.3).
func Price(rate Amount, minutes int64) *big.Rat {
	return new(big.Rat).Mul(rate.Rat(), big.NewRat(minutes, 60))
}

// HoursOf is minutes as the exact hours stored in T_PAYMENT.HOURS.
func HoursOf(minutes int64) Amount {
	return Amount(minutes * AmountScale / 60)
}

// SecondsOfHours is the whole seconds in hours (HOURS × 3600, truncated).
func SecondsOfHours(hours Amount) time.Duration {
	return time.Duration(int64(hours)*3600/AmountScale) * time.Second
}

// WholeSeconds is d in whole seconds, fractions dropped (docs/studies/parking.md §5.1).
func WholeSeconds(d time.Duration) int64 {
	return int64(d / time.Second)
}

// WholeMinutes is d in whole minutes, rounded down.
func WholeMinutes(d time.Duration) int64 {
	return floorDiv(WholeSeconds(d), 60)
}

// Refund is what stop_service gives back (docs/studies/parking.md §7.5 step 5): the unused
// whole quarter-hours of a paid session, less a safety second, priced at
// the session's average price per minute and rounded half-to-even to cents.
// It fails when the paid time is under a minute (no price per minute).
func Refund(paid Amount, start, paidUntil, now time.Time) (*big.Rat, error) {
	left := WholeSeconds(paidUntil.Sub(now)) - 1
	refundedMinutes := QuarterHour * floorDiv(left, 15*60)
	paidMinutes := WholeMinutes(paidUntil.Sub(start))
	if paidMinutes <= 0 {
		return nil, fmt.Errorf("paid time of %d minutes has no price per minute", paidMinutes)
	}
	exact := new(big.Rat).Mul(paid.Rat(), big.NewRat(refundedMinutes, paidMinutes))
	return RoundToCents(exact), nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
