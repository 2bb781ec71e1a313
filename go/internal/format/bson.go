package format

import (
	"io"

	"go.mongodb.org/mongo-driver/bson"

	"stratabench.dev/go/internal/dataset"
)

// bsonCodec stores the list with the MongoDB driver's bson package by
// reflection: one document {"records": [...]}, each record a sub-document
// keyed by the lowercase field names, time as an int64 count of
// nanoseconds (BSON's datetime holds milliseconds). This is the wire of
// Python's bson codec, so each reads the other's file; Python writes small
// integers as int32, which decode into the int64 fields here.
type bsonCodec struct{}

type bsonRecord struct {
	Bool   bool    `bson:"bool"`
	Int    int64   `bson:"int"`
	Float  float64 `bson:"float"`
	String string  `bson:"string"`
	Time   int64   `bson:"time"`
}

type bsonAsset struct {
	Records []bsonRecord `bson:"records"`
}

func init() { RegisterCodec(71, bsonCodec{}) }

func (bsonCodec) Name() string { return "bson" }

func (bsonCodec) Encode(w io.Writer, recs dataset.Records) error {
	asset := bsonAsset{Records: make([]bsonRecord, len(recs))}
	for i, r := range recs {
		asset.Records[i] = bsonRecord{Bool: r.Bool, Int: r.Int, Float: r.Float, String: r.String, Time: unixNano(r.Time)}
	}
	data, err := bson.Marshal(asset)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

func (bsonCodec) Decode(r io.Reader, dst *dataset.Records) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	var asset bsonAsset
	if err := bson.Unmarshal(data, &asset); err != nil {
		return err
	}
	recs := grow(dst, len(asset.Records))
	for i, w := range asset.Records {
		recs[i] = dataset.Record{Bool: w.Bool, Int: w.Int, Float: w.Float, String: w.String, Time: fromUnixNano(w.Time)}
	}
	*dst = recs
	return nil
}
