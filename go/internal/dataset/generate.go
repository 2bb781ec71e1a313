package dataset

import (
	"encoding/hex"
	"math/rand"
	"strings"
	"time"
)

// Generate returns the n records of the dataset seeded with seed.
//
// It uses an explicit *rand.Rand: since Go 1.24 the package-level
// rand.Seed the seed program called is a no-op by default, so the global
// functions would give different data on every run (docs/studies/bulkload.md §2.1).
func Generate(n int, seed int64) Records {
	r := rand.New(rand.NewSource(seed))
	recs := make(Records, n)
	for i := range recs {
		// The draw order is not the field order (docs/studies/bulkload.md §2.6); Read keeps
		// leftover bytes in r for the next record.
		b := make([]byte, 8+r.Intn(64))
		r.Read(b)
		recs[i] = Record{
			Bool:   r.Int()&1 == 0,
			Int:    int64(r.Int()),
			Float:  r.NormFloat64(),
			String: strings.ToUpper(hex.EncodeToString(b)),
		}
		s := r.Int63n(1 << 31)
		ns := r.Int63n(1e9)
		recs[i].Time = time.Unix(s, ns).UTC()
	}
	return recs
}
