package format

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"stratabench.dev/go/internal/dataset"
)

// arrowCodec stores the list as an Arrow IPC stream of one record batch,
// with apache/arrow-go: a column per field, time as timestamp[ns, UTC].
// This is the stream Python's arrow codec (pyarrow) writes, so each reads
// the other's. A load reads every column into records; strings are copied
// out of the batch's buffers, which are released after the load.
type arrowCodec struct{}

var arrowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "bool", Type: arrow.FixedWidthTypes.Boolean},
	{Name: "int", Type: arrow.PrimitiveTypes.Int64},
	{Name: "float", Type: arrow.PrimitiveTypes.Float64},
	{Name: "string", Type: arrow.BinaryTypes.String},
	{Name: "time", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}},
}, nil)

func init() { RegisterCodec(75, arrowCodec{}) }

func (arrowCodec) Name() string { return "arrow" }

func (arrowCodec) Encode(w io.Writer, recs dataset.Records) error {
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrowSchema)
	defer b.Release()
	bools := b.Field(0).(*array.BooleanBuilder)
	ints := b.Field(1).(*array.Int64Builder)
	floats := b.Field(2).(*array.Float64Builder)
	strs := b.Field(3).(*array.StringBuilder)
	times := b.Field(4).(*array.TimestampBuilder)
	for _, r := range recs {
		bools.Append(r.Bool)
		ints.Append(r.Int)
		floats.Append(r.Float)
		strs.Append(r.String)
		times.Append(arrow.Timestamp(unixNano(r.Time)))
	}
	rec := b.NewRecord()
	defer rec.Release()
	iw := ipc.NewWriter(w, ipc.WithSchema(arrowSchema))
	if err := iw.Write(rec); err != nil {
		return err
	}
	return iw.Close()
}

var errArrow = errors.New("not the records' Arrow columns")

func (arrowCodec) Decode(r io.Reader, dst *dataset.Records) error {
	rdr, err := ipc.NewReader(r)
	if err != nil {
		return err
	}
	defer rdr.Release()
	recs := (*dst)[:0]
	for rdr.Next() {
		rec := rdr.Record()
		if rec.NumCols() != 5 {
			return fmt.Errorf("%w: %d columns", errArrow, rec.NumCols())
		}
		bools, ok1 := rec.Column(0).(*array.Boolean)
		ints, ok2 := rec.Column(1).(*array.Int64)
		floats, ok3 := rec.Column(2).(*array.Float64)
		strs, ok4 := rec.Column(3).(*array.String)
		times, ok5 := rec.Column(4).(*array.Timestamp)
		if !(ok1 && ok2 && ok3 && ok4 && ok5) {
			return fmt.Errorf("%w: column types %v", errArrow, rec.Schema())
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			recs = append(recs, dataset.Record{
				Bool: bools.Value(i), Int: ints.Value(i), Float: floats.Value(i),
				String: strings.Clone(strs.Value(i)), Time: fromUnixNano(int64(times.Value(i))),
			})
		}
	}
	if err := rdr.Err(); err != nil {
		return err
	}
	*dst = recs
	return nil
}
