package format

import (
	"io"

	gojson "github.com/goccy/go-json"

	"stratabench.dev/go/internal/dataset"
)

// goJSONCodec stores the list with goccy/go-json, a drop-in replacement
// for encoding/json that compiles an encoder and decoder per type: the
// same wire (the canonical form), read by the Python json codecs too.
type goJSONCodec struct{}

func init() { RegisterCodec(60, goJSONCodec{}) }

func (goJSONCodec) Name() string { return "go-json" }

func (goJSONCodec) Encode(w io.Writer, recs dataset.Records) error {
	return gojson.NewEncoder(w).Encode(recs)
}

func (goJSONCodec) Decode(r io.Reader, dst *dataset.Records) error {
	return gojson.NewDecoder(r).Decode(dst)
}
