package format

import (
	"encoding/xml"
	"io"

	"stratabench.dev/go/internal/dataset"
)

// xmlCodec stores the list with encoding/xml by reflection: one <records>
// element holding a <record> per record, fields as elements named after
// the Go fields, time as RFC3339Nano text (exact) and floats in Go's
// shortest round-trip spelling. The standard library's other text format.
type xmlCodec struct{}

type xmlAsset struct {
	XMLName xml.Name         `xml:"records"`
	Records []dataset.Record `xml:"record"`
}

func init() { RegisterCodec(80, xmlCodec{}) }

func (xmlCodec) Name() string { return "xml" }

func (xmlCodec) Encode(w io.Writer, recs dataset.Records) error {
	return xml.NewEncoder(w).Encode(xmlAsset{Records: recs})
}

func (xmlCodec) Decode(r io.Reader, dst *dataset.Records) error {
	asset := xmlAsset{Records: (*dst)[:0]}
	if err := xml.NewDecoder(r).Decode(&asset); err != nil {
		return err
	}
	*dst = asset.Records
	return nil
}
