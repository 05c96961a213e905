package parley

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// The REST mirror: every row at its method and path. A GET's arguments are
// its query (each typed as the row's input schema says), a POST's its JSON
// body; {id} comes from the path. The same token check, the same core
// operation and the same JSON as the tool; a refusal is the same object
// with the reason's HTTP status.

func (f *Face) rest(o *operation) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		out, err := f.restCall(w, r, o)
		f.observe(o.key, err, start)
		if err != nil {
			f.writeRefusal(w, f.asError(err, o.key))
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
}

func (f *Face) restCall(w http.ResponseWriter, r *http.Request, o *operation) (any, error) {
	ctx := r.Context()
	c, err := f.authenticate(ctx, r, pircan.CodeUnauthenticated)
	if err != nil {
		return nil, err
	}
	if err := f.admit(ctx, c); err != nil {
		return nil, err
	}
	obj, err := restArgs(w, r, o)
	if err != nil {
		return nil, err
	}
	return o.call(ctx, f, c, obj)
}

// restArgs are a request's arguments as one JSON object, as a tool call's.
func restArgs(w http.ResponseWriter, r *http.Request, o *operation) (map[string]json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, pircan.Errorf(pircan.CodePayloadTooLarge, "A request body is at most %d bytes.", maxBody)
		}
		if err != nil {
			return nil, pircan.Errorf(pircan.CodeInvalidJSON, "The body could not be read.")
		}
		if len(strings.TrimSpace(string(body))) > 0 {
			if obj, err = pircan.DecodeObject(body); err != nil {
				return nil, pircan.Errorf(pircan.CodeInvalidJSON, "The body must be one JSON object: %v.", err)
			}
		}
	} else {
		props, _ := o.input["properties"].(map[string]any)
		for name, values := range r.URL.Query() {
			raw, err := queryValue(name, values, props[name])
			if err != nil {
				return nil, err
			}
			obj[name] = raw
		}
	}
	if id := r.PathValue("id"); id != "" {
		obj["id"], _ = json.Marshal(id)
	}
	return obj, nil
}

// queryValue is a query parameter as the JSON value the row's schema
// expects: a number, a boolean, a list (repeated or comma-separated), or
// a string. An unknown parameter is passed as a string, for the
// operation to name.
func queryValue(name string, values []string, schema any) (json.RawMessage, error) {
	typ := ""
	if s, ok := schema.(map[string]any); ok {
		if t, ok := s["type"].(string); ok {
			typ = t
		}
	}
	v := values[len(values)-1]
	bad := func(what string) error {
		e := pircan.FieldError(pircan.CodeInvalidBody, name, "%q must be %s.", name, what)
		e.Rule = pircan.RuleType
		return e
	}
	switch typ {
	case "integer":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, bad("a whole number")
		}
		return json.Marshal(n)
	case "boolean":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, bad("true or false")
		}
		return json.Marshal(b)
	case "array":
		var items []string
		for _, v := range values {
			items = append(items, strings.Split(v, ",")...)
		}
		return json.Marshal(items)
	}
	return json.Marshal(v)
}
