package loadclient

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// Store is what a load client needs of a store: the Python store contract's
// get and put, and a batch put for the untimed loading of its keys.
// Keys are whole (the run's prefix already in front).
type Store interface {
	// Get returns the value and true, or false when the key is missing.
	Get(key []byte) ([]byte, bool, error)
	Put(key, value []byte) error
	PutMany(keys, values [][]byte) error
	Close() error
}

// StoreConfig is how to reach the store, with the Python plugin's settings already resolved.
type StoreConfig struct {
	URL            string  `json:"url"`
	KeyTTLS        int     `json:"key_ttl_s"`
	ConnectTimeout float64 `json:"connect_timeout_s"`
	SocketTimeout  float64 `json:"socket_timeout_s"`
}

// Opener opens a store of one URL scheme.
type Opener func(StoreConfig) (Store, error)

var openers = map[string]Opener{}

// RegisterStore makes schemes open with open; a scheme registered twice is a programming error.
func RegisterStore(open Opener, schemes ...string) {
	for _, scheme := range schemes {
		if _, dup := openers[scheme]; dup {
			panic("loadclient: store scheme registered twice: " + scheme)
		}
		openers[scheme] = open
	}
}

// Schemes lists the URL schemes Go clients can load, sorted.
func Schemes() []string {
	var out []string
	for s := range openers {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// OpenStore opens the store of cfg.URL.
func OpenStore(cfg StoreConfig) (Store, error) {
	parts, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("bad store URL: %v", err)
	}
	open, ok := openers[parts.Scheme]
	if !ok {
		return nil, fmt.Errorf("Go clients cannot load %s:// stores; they load %s", parts.Scheme,
			strings.Join(Schemes(), ", "))
	}
	return open(cfg)
}
