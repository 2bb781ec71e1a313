package format

import (
	"io"

	jsoniter "github.com/json-iterator/go"

	"stratabench.dev/go/internal/dataset"
)

// jsoniterCodec stores the list with json-iterator in its
// encoding/json-compatible configuration: the canonical wire.
type jsoniterCodec struct{}

var jsoniterStd = jsoniter.ConfigCompatibleWithStandardLibrary

func init() { RegisterCodec(61, jsoniterCodec{}) }

func (jsoniterCodec) Name() string { return "jsoniter" }

func (jsoniterCodec) Encode(w io.Writer, recs dataset.Records) error {
	return jsoniterStd.NewEncoder(w).Encode(recs)
}

func (jsoniterCodec) Decode(r io.Reader, dst *dataset.Records) error {
	return jsoniterStd.NewDecoder(r).Decode(dst)
}
