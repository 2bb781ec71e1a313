package format

import (
	"errors"
	"fmt"
	"io"

	flatbuffers "github.com/google/flatbuffers/go"

	"stratabench.dev/go/internal/dataset"
)

// flatbuffersCodec stores the list as the FlatBuffers tables Python's
// flatbuffers codec writes (no flatc on either side), on Google's Go
// runtime:
//
//	table Record { bool: bool; int: long; float: double; string: string; time: long; }
//	table RecordList { records: [Record]; }
//
// time is a long count of nanoseconds. Every field is written, defaults
// included, as Python's ForceDefaults does (a negative zero keeps its
// sign); the reader takes absent fields as their defaults, as flatc's
// accessors do. A load reads every field of every table into records: the
// tables themselves need no parse.
type flatbuffersCodec struct{}

func init() { RegisterCodec(74, flatbuffersCodec{}) }

func (flatbuffersCodec) Name() string { return "flatbuffers" }

func (flatbuffersCodec) Encode(w io.Writer, recs dataset.Records) error {
	b := flatbuffers.NewBuilder(1 << 20)
	tables := make([]flatbuffers.UOffsetT, len(recs))
	for i, r := range recs {
		s := b.CreateString(r.String)
		b.StartObject(5)
		b.PrependBool(r.Bool)
		b.Slot(0)
		b.PrependInt64(r.Int)
		b.Slot(1)
		b.PrependFloat64(r.Float)
		b.Slot(2)
		b.PrependUOffsetTSlot(3, s, 0)
		b.PrependInt64(unixNano(r.Time))
		b.Slot(4)
		tables[i] = b.EndObject()
	}
	b.StartVector(4, len(tables), 4)
	for i := len(tables) - 1; i >= 0; i-- {
		b.PrependUOffsetT(tables[i])
	}
	vec := b.EndVector(len(tables))
	b.StartObject(1)
	b.PrependUOffsetTSlot(0, vec, 0)
	b.Finish(b.EndObject())
	_, err := w.Write(b.FinishedBytes())
	return err
}

var errFlatbuffers = errors.New("malformed FlatBuffers records")

func (flatbuffersCodec) Decode(r io.Reader, dst *dataset.Records) (err error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	// The runtime does not verify buffers: check what the reads below rely
	// on, and turn an out-of-range read of a damaged buffer into an error.
	if len(data) < 8 {
		return fmt.Errorf("%w: %d bytes", errFlatbuffers, len(data))
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", errFlatbuffers, p)
		}
	}()
	root := flatbuffers.GetUOffsetT(data)
	if int(root) >= len(data) {
		return fmt.Errorf("%w: root offset %d outside %d bytes", errFlatbuffers, root, len(data))
	}
	list := flatbuffers.Table{Bytes: data, Pos: root}
	at := flatbuffers.UOffsetT(list.Offset(4))
	if at == 0 {
		return fmt.Errorf("%w: no records vector", errFlatbuffers)
	}
	start, n := list.Vector(at), list.VectorLen(at)
	if int(start)+4*n > len(data) {
		return fmt.Errorf("%w: %d records do not fit in %d bytes", errFlatbuffers, n, len(data))
	}
	recs := grow(dst, n)
	for i := range recs {
		t := flatbuffers.Table{Bytes: data, Pos: list.Indirect(start + flatbuffers.UOffsetT(4*i))}
		var s string
		if o := flatbuffers.UOffsetT(t.Offset(10)); o != 0 {
			s = t.String(t.Pos + o)
		}
		recs[i] = dataset.Record{
			Bool: t.GetBoolSlot(4, false), Int: t.GetInt64Slot(6, 0), Float: t.GetFloat64Slot(8, 0),
			String: s, Time: fromUnixNano(t.GetInt64Slot(12, 0)),
		}
	}
	*dst = recs
	return nil
}
