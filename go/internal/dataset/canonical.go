package dataset

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"io"
	"time"
)

// WriteCanonical writes the canonical form of recs to w: what
// encoding/json's Encoder writes for the list, a JSON array without
// whitespace followed by one line feed (docs/studies/bulkload.md §3).
//
// Times are written in UTC. Some decoders (msgpack by default) hand back
// the right instant in time.Local; the canonical form is about the data,
// not the decoder's choice of presentation zone, so such values are
// converted on the way out. recs itself is not modified.
func WriteCanonical(w io.Writer, recs Records) error {
	out := recs
	for i := range recs {
		if recs[i].Time.Location() != time.UTC {
			out = make(Records, len(recs))
			copy(out, recs)
			for j := range out {
				out[j].Time = out[j].Time.UTC()
			}
			break
		}
	}
	enc := json.NewEncoder(w)
	return enc.Encode(out)
}

// Canonical returns the canonical bytes of recs.
func Canonical(recs Records) ([]byte, error) {
	var buf bytes.Buffer
	if err := WriteCanonical(&buf, recs); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Hash returns the SHA-1 of the canonical form of recs as 40 lowercase hex
// digits: the integrity hash every format's decode path must reproduce.
func Hash(recs Records) (string, error) {
	h := sha1.New()
	if err := WriteCanonical(h, recs); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
