package format

import (
	"time"

	"stratabench.dev/go/internal/dataset"
)

// nsRecord is a record with its time as int64 nanoseconds since the epoch:
// the typed form of Python's rows, and the wire of the formats whose own
// time type would lose precision or speak another dialect (BSON's
// milliseconds, CBOR's and Avro's float or micro timestamps). Each format
// declares its own copy with its tags; these convert the time.
func unixNano(t time.Time) int64 { return t.UnixNano() }

func fromUnixNano(ns int64) time.Time { return time.Unix(0, ns).UTC() }

// grow returns *dst resized to n records, reusing its backing array when it
// is large enough (the warm variant's destination).
func grow(dst *dataset.Records, n int) dataset.Records {
	if cap(*dst) >= n {
		return (*dst)[:n]
	}
	return make(dataset.Records, n)
}
