package format

import (
	"io"

	"github.com/bytedance/sonic"

	"stratabench.dev/go/internal/dataset"
)

// sonicCodec stores the list with bytedance/sonic in its
// encoding/json-compatible configuration (ConfigStd: sorted keys off as the
// struct has them, HTML escaped, valid UTF-8 checked): the canonical wire.
// sonic JIT-compiles codecs on amd64 and falls back to encoding/json
// elsewhere; info's goarch says which ran.
type sonicCodec struct{}

func init() { RegisterCodec(62, sonicCodec{}) }

func (sonicCodec) Name() string { return "sonic" }

func (sonicCodec) Encode(w io.Writer, recs dataset.Records) error {
	return sonic.ConfigStd.NewEncoder(w).Encode(recs)
}

func (sonicCodec) Decode(r io.Reader, dst *dataset.Records) error {
	return sonic.ConfigStd.NewDecoder(r).Decode(dst)
}
