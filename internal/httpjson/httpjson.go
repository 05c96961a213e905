// Package httpjson is how PIRCAN's HTTP faces (A2A, Parley) answer with
// JSON: every such answer is the caller's own, so none is cached.
package httpjson

import (
	"encoding/json"
	"net/http"
)

// Write answers status with v as JSON, not to be stored by any cache.
func Write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
