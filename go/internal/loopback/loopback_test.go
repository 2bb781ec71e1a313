package loopback

import "testing"

func TestAddr(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:0": "127.0.0.1:0", "localhost:8111": "127.0.0.1:8111", "127.1.2.3:5": "127.1.2.3:5", "[::1]:5": "[::1]:5",
	} {
		if got, err := Addr(in); err != nil || got != want {
			t.Errorf("Addr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"0.0.0.0:1", ":27017", "[::]:1", "10.0.0.1:80", "example.com:80", "127.0.0.1", ""} {
		if got, err := Addr(in); err == nil {
			t.Errorf("Addr(%q) = %q, want an error", in, got)
		}
	}
}
