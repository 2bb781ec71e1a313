package format

import (
	"io"

	"github.com/hamba/avro/v2"

	"stratabench.dev/go/internal/dataset"
)

// avroCodec stores the list with hamba/avro: schemaless Avro binary of the
// schema {"type": "array", "items": Record}, time as a long count of
// nanoseconds. This is the wire of Python's fastavro codec, so each reads
// the other's bytes.
type avroCodec struct{}

type avroRecord struct {
	Bool   bool    `avro:"bool"`
	Int    int64   `avro:"int"`
	Float  float64 `avro:"float"`
	String string  `avro:"string"`
	Time   int64   `avro:"time"`
}

var avroSchema = avro.MustParse(`{"type": "array", "items": {"type": "record", "name": "Record", "fields": [
	{"name": "bool", "type": "boolean"}, {"name": "int", "type": "long"}, {"name": "float", "type": "double"},
	{"name": "string", "type": "string"}, {"name": "time", "type": "long"}]}}`)

func init() { RegisterCodec(72, avroCodec{}) }

func (avroCodec) Name() string { return "avro" }

func (avroCodec) Encode(w io.Writer, recs dataset.Records) error {
	wire := make([]avroRecord, len(recs))
	for i, r := range recs {
		wire[i] = avroRecord{Bool: r.Bool, Int: r.Int, Float: r.Float, String: r.String, Time: unixNano(r.Time)}
	}
	enc := avro.NewEncoderForSchema(avroSchema, w)
	return enc.Encode(wire)
}

func (avroCodec) Decode(r io.Reader, dst *dataset.Records) error {
	var wire []avroRecord
	if err := avro.NewDecoderForSchema(avroSchema, r).Decode(&wire); err != nil {
		return err
	}
	recs := grow(dst, len(wire))
	for i, w := range wire {
		recs[i] = dataset.Record{Bool: w.Bool, Int: w.Int, Float: w.Float, String: w.String, Time: fromUnixNano(w.Time)}
	}
	*dst = recs
	return nil
}
