// Package httpapi is the parking service's HTTP transport (docs/studies/parking.md §3): GET
// /<function>?<query> with the function taken from the last path segment,
// JSON answers with `ts`, HTTP 500 "Internal server error" for an unknown
// function or a service_descr that is not JSON, one connection per call.
// It also serves the statement counts at /_stats, outside the API.
package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"stratabench.dev/go/internal/parking/rules"
	"stratabench.dev/go/internal/parking/service"
	"stratabench.dev/go/internal/parking/trace"
)

// Paths of the statement counters. Their names start with "_" so no API
// call can ever reach them: no function's name does.
const (
	StatsPath      = "/_stats"
	StatsResetPath = "/_stats/reset"
)

// Handler answers API calls with a Service, logging every HTTP message.
type Handler struct {
	service *service.Service
	stats   *trace.Stats
	log     *trace.Log
}

// NewHandler returns the HTTP handler of svc; log may be nil (off).
func NewHandler(svc *service.Service, stats *trace.Stats, log *trace.Log) *Handler {
	return &Handler{service: svc, stats: stats, log: log}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case StatsPath, StatsResetPath:
		h.serveStats(w, r)
		return
	}
	if h.log.On() {
		h.log.Printf("HTTP", "request %s %s", r.Method, r.URL.RequestURI())
	}
	if r.Method != http.MethodGet {
		h.reply(w, http.StatusNotImplemented, "text/plain", []byte("Unsupported method"))
		return
	}
	name := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	answer, err := h.service.Call(r.Context(), name, parseQuery(r.URL.RawQuery))
	if errors.Is(err, service.ErrUnknownFunction) || errors.Is(err, service.ErrBadDescr) {
		h.reply(w, http.StatusInternalServerError, "text/plain", []byte("Internal server error"))
		return
	}
	h.reply(w, http.StatusOK, "application/json", encode(answer, rules.AnswerTS(time.Now())))
}

func (h *Handler) reply(w http.ResponseWriter, status int, contentType string, body []byte) {
	header := w.Header()
	header.Set("Content-Type", contentType)
	header.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body) // the client went away: nothing left to tell it
	if h.log.On() {
		h.log.Printf("HTTP", "response %d %s", status, body)
	}
}

// serveStats answers GET /_stats with the counts by kind as a JSON object,
// and POST /_stats/reset with the counts before zeroing them.
func (h *Handler) serveStats(w http.ResponseWriter, r *http.Request) {
	want := http.MethodGet
	if r.URL.Path == StatsResetPath {
		want = http.MethodPost
	}
	if r.Method != want {
		w.Header().Set("Allow", want)
		http.Error(w, "use "+want, http.StatusMethodNotAllowed)
		return
	}
	counts := h.stats.Snapshot()
	if r.URL.Path == StatsResetPath {
		h.stats.Reset()
	}
	body, err := json.Marshal(counts)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
