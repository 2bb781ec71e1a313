package format

import (
	"io"

	segjson "github.com/segmentio/encoding/json"

	"stratabench.dev/go/internal/dataset"
)

// segmentioCodec stores the list with segmentio/encoding/json, an
// encoding/json-compatible library without reflection on the hot path:
// the canonical wire.
type segmentioCodec struct{}

func init() { RegisterCodec(63, segmentioCodec{}) }

func (segmentioCodec) Name() string { return "segmentio-json" }

func (segmentioCodec) Encode(w io.Writer, recs dataset.Records) error {
	return segjson.NewEncoder(w).Encode(recs)
}

func (segmentioCodec) Decode(r io.Reader, dst *dataset.Records) error {
	return segjson.NewDecoder(r).Decode(dst)
}
