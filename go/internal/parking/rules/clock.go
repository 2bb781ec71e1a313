package rules

import (
	"fmt"
	"time"
)

// Now is the application server's clock (spec §5.1: timestamps never come
// from the database), in UTC and truncated to the microsecond that
// PostgreSQL and MariaDB DATETIME(6) keep, so a stored time reads back equal.
func Now() time.Time {
	return time.Now().UTC().Truncate(time.Microsecond)
}

// AnswerTS is the `ts` of every answer: Unix seconds with three decimals.
func AnswerTS(t time.Time) string {
	ms := t.UnixMilli()
	return fmt.Sprintf("%d.%03d", ms/1000, ms%1000)
}

// StartTS is a stored time in answers (`start_ts`): the reference converts
// it through a time tuple, which drops the fraction, so it ends in ".000".
func StartTS(t time.Time) string {
	return fmt.Sprintf("%d.000", t.Unix())
}
