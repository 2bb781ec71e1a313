package format

import (
	"errors"
	"fmt"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"stratabench.dev/go/internal/dataset"
)

// protobufCodec stores the list as the protobuf message Python's protobuf
// codec builds at run time (no protoc on either side):
//
//	message Record { bool bool = 1; int64 int = 2; double float = 3; string string = 4; int64 time = 5; }
//	message RecordList { repeated Record records = 1; }
//
// time is int64 nanoseconds. The code is hand-written on protowire, the
// wire layer google.golang.org/protobuf's generated code sits on, so no
// generator step; proto3 leaves zero values out, and the decoder skips
// fields it does not know, as generated code does.
type protobufCodec struct{}

func init() { RegisterCodec(73, protobufCodec{}) }

func (protobufCodec) Name() string { return "protobuf" }

func (protobufCodec) Encode(w io.Writer, recs dataset.Records) error {
	var out, rec []byte
	for _, r := range recs {
		rec = rec[:0]
		if r.Bool {
			rec = protowire.AppendTag(rec, 1, protowire.VarintType)
			rec = protowire.AppendVarint(rec, 1)
		}
		if r.Int != 0 {
			rec = protowire.AppendTag(rec, 2, protowire.VarintType)
			rec = protowire.AppendVarint(rec, uint64(r.Int))
		}
		if r.Float != 0 || math.Signbit(r.Float) {
			rec = protowire.AppendTag(rec, 3, protowire.Fixed64Type)
			rec = protowire.AppendFixed64(rec, math.Float64bits(r.Float))
		}
		if r.String != "" {
			rec = protowire.AppendTag(rec, 4, protowire.BytesType)
			rec = protowire.AppendString(rec, r.String)
		}
		if ns := unixNano(r.Time); ns != 0 {
			rec = protowire.AppendTag(rec, 5, protowire.VarintType)
			rec = protowire.AppendVarint(rec, uint64(ns))
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, rec)
	}
	_, err := w.Write(out)
	return err
}

var errProtobuf = errors.New("malformed protobuf")

func (protobufCodec) Decode(r io.Reader, dst *dataset.Records) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	recs := (*dst)[:0]
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return fmt.Errorf("%w: %v", errProtobuf, protowire.ParseError(n))
		}
		data = data[n:]
		if num != 1 || typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, data); n < 0 {
				return fmt.Errorf("%w: %v", errProtobuf, protowire.ParseError(n))
			}
			data = data[n:]
			continue
		}
		msg, n := protowire.ConsumeBytes(data)
		if n < 0 {
			return fmt.Errorf("%w: %v", errProtobuf, protowire.ParseError(n))
		}
		data = data[n:]
		rec, err := decodeProtoRecord(msg)
		if err != nil {
			return err
		}
		recs = append(recs, rec)
	}
	*dst = recs
	return nil
}

func decodeProtoRecord(msg []byte) (dataset.Record, error) {
	var rec dataset.Record
	var ns int64
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return rec, fmt.Errorf("%w: %v", errProtobuf, protowire.ParseError(n))
		}
		msg = msg[n:]
		switch {
		case num == 1 && typ == protowire.VarintType:
			var v uint64
			v, n = protowire.ConsumeVarint(msg)
			rec.Bool = v != 0
		case num == 2 && typ == protowire.VarintType:
			var v uint64
			v, n = protowire.ConsumeVarint(msg)
			rec.Int = int64(v)
		case num == 3 && typ == protowire.Fixed64Type:
			var v uint64
			v, n = protowire.ConsumeFixed64(msg)
			rec.Float = math.Float64frombits(v)
		case num == 4 && typ == protowire.BytesType:
			var v string
			v, n = protowire.ConsumeString(msg)
			rec.String = v
		case num == 5 && typ == protowire.VarintType:
			var v uint64
			v, n = protowire.ConsumeVarint(msg)
			ns = int64(v)
		default:
			n = protowire.ConsumeFieldValue(num, typ, msg)
		}
		if n < 0 {
			return rec, fmt.Errorf("%w: %v", errProtobuf, protowire.ParseError(n))
		}
		msg = msg[n:]
	}
	rec.Time = fromUnixNano(ns)
	return rec, nil
}
