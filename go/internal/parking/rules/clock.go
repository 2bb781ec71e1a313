package rules

import (
	"fmt"
	"time"
)

// Now is the application server's clock (docs/studies/parking.md §5.1: timestamps never come
// from the database) in whole seconds, as the original's TIMESTAMP columns
// kept them and as the Python servers store them. It is UTC, which is the
// local time of the benchmark machines.
func Now() time.Time {
	return time.Now().UTC().Truncate(time.Second)
}

// AnswerTS is the `ts` of every answer: Unix seconds with three decimals
// (of time.Now(), not of the whole-second Now).
func AnswerTS(t time.Time) string {
	ms := t.UnixMilli()
	return fmt.Sprintf("%d.%03d", ms/1000, ms%1000)
}

// StartTS is a stored time in answers (`start_ts`): the reference converts
// it through a time tuple, which drops the fraction, so it ends in ".000".
func StartTS(t time.Time) string {
	return fmt.Sprintf("%d.000", t.Unix())
}
