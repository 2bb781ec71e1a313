package format

import (
	"encoding/gob"
	"io"

	"stratabench.dev/go/internal/dataset"
)

// gobCodec stores the list as one encoding/gob stream; times travel through
// time.Time's binary marshaller.
type gobCodec struct{}

func init() { RegisterCodec(30, gobCodec{}) }

func (gobCodec) Name() string { return "gob" }

func (gobCodec) Encode(w io.Writer, recs dataset.Records) error {
	// An unnamed slice, as the seed's []Data: gob writes the type's name into
	// the stream. The asset is then 12,024,222 bytes at the reference size,
	// the seed's 12,024,220 plus the 2 bytes by which "Record" is longer
	// than the seed's "Data".
	return gob.NewEncoder(w).Encode([]dataset.Record(recs))
}

func (gobCodec) Decode(r io.Reader, dst *dataset.Records) error {
	return gob.NewDecoder(r).Decode(dst)
}
