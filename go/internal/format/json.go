package format

import (
	"encoding/json"
	"io"

	"stratabench.dev/go/internal/dataset"
)

// jsonCodec stores the list with encoding/json. Its asset is exactly the
// canonical form, so the file's SHA-1 is the dataset hash.
type jsonCodec struct{}

func init() { RegisterCodec(20, jsonCodec{}) }

func (jsonCodec) Name() string { return "json" }

func (jsonCodec) Encode(w io.Writer, recs dataset.Records) error {
	return dataset.WriteCanonical(w, recs)
}

func (jsonCodec) Decode(r io.Reader, dst *dataset.Records) error {
	return json.NewDecoder(r).Decode(dst)
}
