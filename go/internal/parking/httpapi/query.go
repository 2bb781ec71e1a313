package httpapi

import (
	"strings"
	"unicode/utf8"
)

// parseQuery decodes a query string as the reference server does: split
// on '&', skip empty pieces, split each at the first '=' (none: empty
// value), turn '+' into a space, then percent-decode; a repeated key keeps
// its last value. Like Python's unquote it is lenient: a '%' not followed
// by two hex digits stays as it is, and bytes that are not UTF-8 become
// U+FFFD.
func parseQuery(raw string) map[string]string {
	params := map[string]string{}
	for _, piece := range strings.Split(raw, "&") {
		if piece == "" {
			continue
		}
		key, value, _ := strings.Cut(piece, "=")
		params[unquotePlus(key)] = unquotePlus(value)
	}
	return params
}

func unquotePlus(s string) string {
	s = strings.ReplaceAll(s, "+", " ")
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
