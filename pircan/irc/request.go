package irc

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/creatimus/pircan/pircan"
)

const (
	// Prefix starts every request and reply (spec §2).
	Prefix = "PIRCAN/1"
	// MaxRequestBytes is the cap on a whole request line.
	MaxRequestBytes = 400
	// MaxIDChars is the cap on the correlation id (spec §2); MaxIDBytes
	// caps its encoding in "re" (UTF-8, with \" \\ and \uXXXX escapes).
	MaxIDChars = 64
	MaxIDBytes = 64
)

// Request is one parsed `PIRCAN/1 <VERB> [<json-object>]` line.
type Request struct {
	Verb  string // upper-case
	ID    string
	HasID bool
	args  map[string]json.RawMessage // without "id"
}

// Parse turns a PRIVMSG text into a Request. Errors are *pircan.Error values with
// the spec's codes; when the id could be read, the partial Request is
// returned beside the error so that the reply still carries `re`.
func Parse(text string) (*Request, *pircan.Error) {
	if len(text) > MaxRequestBytes {
		// Read what we can so the error can name the verb and echo the id.
		req, _ := parseLine(text)
		return req, pircan.Errorf(pircan.CodeTooLong, "A request may be at most %d bytes; this one has %d.", MaxRequestBytes, len(text))
	}
	return parseLine(text)
}

func parseLine(text string) (*Request, *pircan.Error) {
	line := strings.TrimSpace(text)
	if line == "" {
		return nil, pircan.Errorf(pircan.CodeEmpty, "The message is empty. Send PIRCAN/1 HELP.")
	}
	prefix, rest, _ := strings.Cut(line, " ")
	if !strings.EqualFold(prefix, Prefix) {
		return nil, pircan.Errorf(pircan.CodeNotPircan, "Requests start with %s <VERB>. Send PIRCAN/1 HELP.", Prefix)
	}
	rest = strings.TrimLeft(rest, " ")
	verb, argText, _ := strings.Cut(rest, " ")
	if verb == "" || strings.HasPrefix(verb, "{") {
		missing := pircan.Errorf(pircan.CodeMissingVerb, "A verb must follow %s. Send PIRCAN/1 HELP.", Prefix)
		// The object that came instead may still carry the id to answer with.
		if args, err := pircan.DecodeObject([]byte(rest)); err == nil {
			if id, ok, _ := readID(args); ok {
				return &Request{ID: id, HasID: true}, missing
			}
		}
		return nil, missing
	}
	req := &Request{Verb: strings.ToUpper(verb)}
	argText = strings.TrimSpace(argText)
	if argText == "" {
		return req, nil
	}
	args, err := pircan.DecodeObject([]byte(argText))
	if err != nil {
		return req, pircan.Errorf(pircan.CodeInvalidJSON, "The argument must be one JSON object: %s.", err)
	}
	id, ok, perr := readID(args)
	if perr != nil {
		return req, perr
	}
	req.ID, req.HasID = id, ok
	delete(args, "id")
	req.args = args
	return req, nil
}

// readID reads the correlation id of a request's arguments, if given.
func readID(args map[string]json.RawMessage) (string, bool, *pircan.Error) {
	raw, ok := args["id"]
	if !ok || pircan.IsNull(raw) {
		return "", false, nil
	}
	var id string
	if err := json.Unmarshal(raw, &id); err != nil {
		return "", false, pircan.Errorf(pircan.CodeInvalidID, `"id" must be a string of at most %d characters.`, MaxIDChars)
	}
	// Every reply carries the id back as "re", so the budgets of all
	// replies count on it: at most 64 bytes as written there.
	if utf8.RuneCountInString(id) > MaxIDChars || pircan.EscapedLen(id) > MaxIDBytes || strings.IndexFunc(id, unicode.IsControl) >= 0 {
		return "", false, pircan.Errorf(pircan.CodeInvalidID, `"id" must be a string of at most %d printable characters, %d bytes as written back in "re".`, MaxIDChars, MaxIDBytes)
	}
	return id, true, nil
}

// HasArgs reports whether the request carried any argument besides id.
func (r *Request) HasArgs() bool { return len(r.args) > 0 }

// Decode fills dst (an operation's argument struct) from the request's
// arguments (pircan.DecodeArgs).
func (r *Request) Decode(dst any) *pircan.Error { return pircan.DecodeArgs(r.args, dst, r.Verb) }
