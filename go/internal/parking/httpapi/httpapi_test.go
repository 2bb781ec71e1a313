package httpapi

import (
	"reflect"
	"testing"

	"stratabench.dev/go/internal/parking/service"
)

func TestParseQuery(t *testing.T) {
	got := parseQuery("a=1&&b=x+y%2Bz&c&a=2&d=%zz%41&e=%E2%82%AC&f=%ff&g=a=b")
	want := map[string]string{"a": "2", "b": "x y+z", "c": "", "d": "%zzA", "e": "€", "f": "\uFFFD", "g": "a=b"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseQuery = %v, want %v", got, want)
	}
}

func TestEncodeLikePythonJSON(t *testing.T) {
	a := service.Answer{Status: "success", Code: "already_done", Fields: []service.Field{
		{Key: "price", Value: "102.00"},
		{Key: "info", Value: []service.Field{{Key: "available_places", Value: int64(7999)}, {Key: "name", Value: "é\"\n\U0001F600"}}},
	}}
	want := `{"price": "102.00", "info": {"available_places": 7999, "name": "\u00e9\"\n\ud83d\ude00"}, ` +
		`"status_code": "already_done", "status": "success", "ts": "1.000"}`
	if got := string(encode(a, "1.000")); got != want {
		t.Errorf("encode =\n%s\nwant\n%s", got, want)
	}
}
