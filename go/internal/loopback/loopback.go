// Package loopback checks listen addresses of stratabench's test servers:
// they must never be reachable from other machines.
package loopback

import (
	"errors"
	"net"
)

// Addr checks that addr is host:port with a loopback host and returns it
// with "localhost" spelled 127.0.0.1.
func Addr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", errors.New("want host:port, like 127.0.0.1:PORT")
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return "", errors.New("refusing a non-loopback address; use 127.0.0.1:PORT")
	}
	return net.JoinHostPort(host, port), nil
}
