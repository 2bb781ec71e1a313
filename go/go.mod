module stratabench.dev/go

go 1.24

require (
	github.com/tinylib/msgp v1.6.5
	github.com/vmihailenco/msgpack/v4 v4.3.13
)

require (
	github.com/golang/protobuf v1.3.4 // indirect
	github.com/philhofer/fwd v1.2.0 // indirect
	github.com/vmihailenco/tagparser v0.1.1 // indirect
	golang.org/x/net v0.0.0-20200301022130-244492dfa37a // indirect
	google.golang.org/appengine v1.6.5 // indirect
)
