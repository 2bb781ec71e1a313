package format

import (
	"io"

	// v4, as in the seed: it still builds with today's Go (checked with Go 1.26).
	"github.com/vmihailenco/msgpack/v4"

	"stratabench.dev/go/internal/dataset"
)

// msgpackCodec stores the list with vmihailenco/msgpack by reflection.
// Each record is a map keyed by the Go field names (Bool, Int, ...); time is
// the standard MessagePack timestamp extension (type -1). Decoded times are
// in time.Local; the canonical form writes them in UTC.
type msgpackCodec struct{}

func init() { RegisterCodec(50, msgpackCodec{}) }

func (msgpackCodec) Name() string { return "msgpack" }

func (msgpackCodec) Encode(w io.Writer, recs dataset.Records) error {
	return msgpack.NewEncoder(w).Encode(recs)
}

func (msgpackCodec) Decode(r io.Reader, dst *dataset.Records) error {
	return msgpack.NewDecoder(r).Decode(dst)
}
