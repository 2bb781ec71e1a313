package format

import (
	"io"

	msgpack5 "github.com/vmihailenco/msgpack/v5"

	"stratabench.dev/go/internal/dataset"
)

// msgpack5Codec stores the list with vmihailenco/msgpack v5, today's
// version of the seed's v4: the same wire (maps keyed by the Go field
// names, time as the timestamp extension -1), read by Python's msgpack
// codec in its go-msgpack mode.
type msgpack5Codec struct{}

func init() { RegisterCodec(51, msgpack5Codec{}) }

func (msgpack5Codec) Name() string { return "msgpack5" }

func (msgpack5Codec) Encode(w io.Writer, recs dataset.Records) error {
	return msgpack5.NewEncoder(w).Encode(recs)
}

func (msgpack5Codec) Decode(r io.Reader, dst *dataset.Records) error {
	return msgpack5.NewDecoder(r).Decode(dst)
}
