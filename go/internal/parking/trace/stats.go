package trace

import (
	"strings"
	"sync/atomic"
	"unicode"
)

// Kinds of SQL statements counted (the rows of the study's Table 2 and of
// docs/studies/parking.md §11.4). The JSON keys of the /_stats endpoint are these names.
const (
	KindSelect          = "SELECT"
	KindSelectForUpdate = "SELECT FOR UPDATE"
	KindUpdate          = "UPDATE"
	KindInsert          = "INSERT"
	KindDelete          = "DELETE"
	KindBegin           = "BEGIN"
	KindCommit          = "COMMIT"
	KindRollback        = "ROLLBACK"
	KindOther           = "OTHER"
)

// Kinds lists every kind in report order.
var Kinds = []string{KindSelect, KindSelectForUpdate, KindUpdate, KindInsert, KindDelete,
	KindBegin, KindCommit, KindRollback, KindOther}

// Stats counts statements by kind; safe for concurrent use.
type Stats struct {
	counts [9]atomic.Int64
}

func kindIndex(kind string) int {
	for i, k := range Kinds {
		if k == kind {
			return i
		}
	}
	return len(Kinds) - 1
}

// Add counts one statement of kind.
func (s *Stats) Add(kind string) { s.counts[kindIndex(kind)].Add(1) }

// Snapshot returns the counts by kind, every kind present.
func (s *Stats) Snapshot() map[string]int64 {
	out := make(map[string]int64, len(Kinds))
	for i, k := range Kinds {
		out[k] = s.counts[i].Load()
	}
	return out
}

// Reset sets every count to zero.
func (s *Stats) Reset() {
	for i := range s.counts {
		s.counts[i].Store(0)
	}
}

// Classify names the kind of a statement by its first keyword; a SELECT
// with FOR UPDATE (FOR UPDATE OF … on PostgreSQL) is a locking read.
func Classify(query string) string {
	q := strings.TrimLeftFunc(query, func(r rune) bool { return unicode.IsSpace(r) || r == '(' })
	end := strings.IndexFunc(q, func(r rune) bool { return !unicode.IsLetter(r) })
	if end < 0 {
		end = len(q)
	}
	switch strings.ToUpper(q[:end]) {
	case "SELECT":
		if strings.Contains(strings.ToUpper(q), " FOR UPDATE") {
			return KindSelectForUpdate
		}
		return KindSelect
	case "UPDATE":
		return KindUpdate
	case "INSERT":
		return KindInsert
	case "DELETE":
		return KindDelete
	}
	return KindOther
}
