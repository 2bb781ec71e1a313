package format

import (
	"io"

	"github.com/fxamacker/cbor/v2"

	"stratabench.dev/go/internal/dataset"
)

// cborCodec stores the list with fxamacker/cbor (RFC 8949) by reflection:
// each record a CBOR array in field order (toarray), time as an integer
// count of nanoseconds; CBOR's time tags hold seconds as an integer or a
// float and would lose the nanoseconds. This is the wire of Python's cbor2
// codec in typed mode, so each reads the other's file.
type cborCodec struct{}

type cborRecord struct {
	_      struct{} `cbor:",toarray"`
	Bool   bool
	Int    int64
	Float  float64
	String string
	Time   int64
}

func init() { RegisterCodec(70, cborCodec{}) }

func (cborCodec) Name() string { return "cbor" }

func (cborCodec) Encode(w io.Writer, recs dataset.Records) error {
	wire := make([]cborRecord, len(recs))
	for i, r := range recs {
		wire[i] = cborRecord{Bool: r.Bool, Int: r.Int, Float: r.Float, String: r.String, Time: unixNano(r.Time)}
	}
	return cbor.NewEncoder(w).Encode(wire)
}

func (cborCodec) Decode(r io.Reader, dst *dataset.Records) error {
	var wire []cborRecord
	if err := cbor.NewDecoder(r).Decode(&wire); err != nil {
		return err
	}
	recs := grow(dst, len(wire))
	for i, w := range wire {
		recs[i] = dataset.Record{Bool: w.Bool, Int: w.Int, Float: w.Float, String: w.String, Time: fromUnixNano(w.Time)}
	}
	*dst = recs
	return nil
}
