// Package dataset generates the bulkload records and their canonical form.
//
// The dataset is a pure function of (n, seed): Go's math/rand (v1) stream
// from an explicit rand.New(rand.NewSource(seed)), consumed in the order of
// docs/studies/bulkload.md §2.6. The canonical form is what encoding/json's Encoder
// writes for the list, and the integrity hash is its SHA-1 (§3).
package dataset

//go:generate go run github.com/tinylib/msgp@v1.6.5 -file record.go -o record_gen.go -tests=false -marshal=false

import "time"

// The msgp generator reads the directive below: decoded times come back in
// UTC instead of time.Local. The wire format (extension 5, 12-byte payload)
// is the same either way.
//msgp:timezone utc

// Record is one bulkload record. The field names are the msgpack (vmihailenco)
// wire keys, the json and msg tags the encoding/json and msgp keys, exactly
// as in the seed's data.go. Int is int64 rather than the seed's int so that
// the dataset does not depend on the platform's word size; every encoder
// here writes both the same way.
type Record struct {
	Bool   bool      `json:"bool" msg:"bool"`
	Int    int64     `json:"int" msg:"int"`
	Float  float64   `json:"float" msg:"float"`
	String string    `json:"string" msg:"string"`
	Time   time.Time `json:"time" msg:"time"`
}

// Records is the list a format stores and loads.
type Records []Record
