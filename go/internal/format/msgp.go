package format

import (
	"io"

	"github.com/tinylib/msgp/msgp"

	"stratabench.dev/go/internal/dataset"
)

// msgpCodec stores the list with the code tinylib/msgp generated for
// dataset.Records (internal/dataset/record_gen.go; regenerate with
// `go generate ./internal/dataset`). Each record is a map with the
// lowercase keys; time is extension 5 with a 12-byte payload (big-endian
// int64 seconds, int32 nanoseconds), msgp's default encoding.
type msgpCodec struct{}

func init() { RegisterCodec(40, msgpCodec{}) }

func (msgpCodec) Name() string { return "msgp" }

func (msgpCodec) Encode(w io.Writer, recs dataset.Records) error {
	return msgp.Encode(w, recs)
}

func (msgpCodec) Decode(r io.Reader, dst *dataset.Records) error {
	return msgp.Decode(r, dst)
}
