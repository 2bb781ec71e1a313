package httpapi

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"

	"stratabench.dev/go/internal/parking/service"
)

// encode writes an answer as the Python servers do: json.dumps's default
// layout (", " and ": " separators, non-ASCII escaped as \uXXXX) of a dict
// filled in order, the function's fields, then status_code, status and ts.
func encode(a service.Answer, ts string) []byte {
	var b strings.Builder
	b.WriteString("{")
	for _, f := range a.Fields {
		writeField(&b, f)
		b.WriteString(", ")
	}
	if a.Code != "" {
		b.WriteString(`"status_code": `)
		writeString(&b, a.Code)
		b.WriteString(", ")
	}
	b.WriteString(`"status": `)
	writeString(&b, a.Status)
	b.WriteString(`, "ts": `)
	writeString(&b, ts)
	b.WriteString("}")
	return []byte(b.String())
}

func writeField(b *strings.Builder, f service.Field) {
	writeString(b, f.Key)
	b.WriteString(": ")
	switch v := f.Value.(type) {
	case string:
		writeString(b, v)
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case []service.Field:
		b.WriteString("{")
		for i, inner := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			writeField(b, inner)
		}
		b.WriteString("}")
	default:
		panic(fmt.Sprintf("answer field %s holds a %T", f.Key, v))
	}
}

func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		case r < 0x80:
			b.WriteRune(r)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(b, `\u%04x\u%04x`, hi, lo)
		default:
			fmt.Fprintf(b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
}
