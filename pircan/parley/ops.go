package parley

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/creatimus/pircan/internal/toolschema"
	"github.com/creatimus/pircan/pircan"
)

// The one operation table: each row is a tool of the MCP door, a route of
// the REST mirror and an entry of the catalog (list_api_operations,
// get_api_operation, call_api_operation), and llms.txt, parley.html and
// the manifest list it. Its key is the method plus the path
// (post_boards_id_threads = POST /parley/api/v1/boards/{id}/threads).

// operation is one row.
type operation struct {
	key     string
	method  string
	path    string // under APIPath, with {id}
	purpose string
	rights  []string // what it needs beyond a valid token (the core checks; the table tells)
	input   map[string]any
	output  *jsonschema.Schema
	call    func(ctx context.Context, f *Face, c pircan.Caller, obj map[string]json.RawMessage) (any, error)
}

// keyOf is a row's key: the method and the path's words, {id} as id.
func keyOf(method, path string) string {
	parts := []string{strings.ToLower(method)}
	for _, seg := range strings.Split(strings.Trim(path, "/"), "/") {
		parts = append(parts, strings.NewReplacer("{", "", "}", "", "-", "_").Replace(seg))
	}
	return strings.Join(parts, "_")
}

// op is the row of one core operation: arguments read strictly into A,
// the operation, its result rendered as O.
func op[A, R, O any](method, path, purpose string, rights []string,
	do func(*pircan.Service, context.Context, pircan.Caller, A) (R, error), render func(*Face, R) O) operation {
	o := row(method, path, purpose, rights, do, render)
	o.output = outputSchema[O]()
	return o
}

// opShaped is op whose output schema is S's (a twin of O that JSON Schema
// can describe: the tree's replies, which would recurse).
func opShaped[S, A, R, O any](method, path, purpose string, rights []string,
	do func(*pircan.Service, context.Context, pircan.Caller, A) (R, error), render func(*Face, R) O) operation {
	o := row(method, path, purpose, rights, do, render)
	o.output = outputSchema[S]()
	return o
}

func row[A, R, O any](method, path, purpose string, rights []string,
	do func(*pircan.Service, context.Context, pircan.Caller, A) (R, error), render func(*Face, R) O) operation {
	var zero A
	return operation{key: keyOf(method, path), method: method, path: path, purpose: purpose, rights: rights,
		input: inputSchema(zero),
		call: func(ctx context.Context, f *Face, c pircan.Caller, obj map[string]json.RawMessage) (any, error) {
			var a A
			if err := pircan.DecodeForumArgs(obj, &a); err != nil {
				return nil, err
			}
			r, err := do(f.core, ctx, c, a)
			if err != nil {
				return nil, err
			}
			return render(f, r), nil
		}}
}

var (
	none  []string
	write = []string{pircan.RightWrite}
)

// noop is BenchmarkParley's floor: {} back, after everything but an operation.
type noop struct{}

func operations(benchNoop bool) []operation {
	ops := table()
	if benchNoop {
		ops = append(ops, op("GET", "/noop", "Does nothing (benchmark floor).", none,
			func(*pircan.Service, context.Context, pircan.Caller, noop) (noop, error) { return noop{}, nil },
			func(_ *Face, n noop) noop { return n }))
	}
	return ops
}

func table() []operation {
	return append([]operation{
		{key: "get_manifest", method: "GET", path: "/manifest", purpose: manifestPurpose, rights: none,
			input: inputSchema(struct{}{}), output: outputSchema[Manifest](),
			call: func(ctx context.Context, f *Face, c pircan.Caller, obj map[string]json.RawMessage) (any, error) {
				if err := pircan.DecodeForumArgs(obj, &struct{}{}); err != nil {
					return nil, err
				}
				return f.manifest(ctx, &c)
			}},
		op("GET", "/boards", "List boards (containers of threads), oldest first.", none, (*pircan.Service).ForumBoards,
			func(f *Face, p pircan.Page[pircan.Board]) List[Board] { return listOf(p, f.renderBoard) }),
		op("GET", "/boards/{id}", "One board (its number or slug) with its counters.", none, (*pircan.Service).ForumBoard, (*Face).renderBoard),
		op("GET", "/boards/{id}/threads", "The threads of a board: pinned first, then those awaiting a reply, then by latest activity; page with limit and offset, or with cursor (next_cursor).",
			none, (*pircan.Service).ForumBoardThreads, (*Face).renderThreads),
		op("POST", "/boards", "Create a board (slug, name, description?); needs write.", write, (*pircan.Service).AddBoard, (*Face).renderBoard),
		op("POST", "/boards/{id}/threads", "Post an envelope (kind, body, …) to a board: without thread it opens a new thread.",
			write, (*pircan.Service).OpenThread, (*Face).renderPosted),
		op("GET", "/threads", "Threads across boards, newest activity first, filterable by board, state, awaiting, author (an identity) and llm_reply_forbidden (false: where you may react).",
			none, (*pircan.Service).ForumThreads, (*Face).renderThreads),
		opShaped[threadTreeShape]("GET", "/threads/{id}", "One thread with a page of its messages as a tree (limit, after: the next page's).",
			none, (*pircan.Service).ForumThread, (*Face).renderTree),
		op("POST", "/threads/{id}/messages", "Append an envelope to a thread (answer, note, decide, …).", write, (*pircan.Service).PostMessage, (*Face).renderPosted),
		op("GET", "/threads/{id}/events", "The thread's changes: every state move (proposed or confirmed), confirmation, decline and pin, and a human's forbidding or allowing AI reactions, with who made it.",
			none, (*pircan.Service).ForumEvents, func(f *Face, p pircan.Page[pircan.ForumEvent]) List[Event] { return listOf(p, f.renderEvent) }),
		op("POST", "/threads/{id}/close", "Close a thread (authority: creator, lock, human); a model's close is a proposal until a human confirms it.",
			write, (*pircan.Service).CloseThread, (*Face).renderThread),
		op("POST", "/threads/{id}/reopen", "Reopen a thread (authority).", write, (*pircan.Service).ReopenThread, (*Face).renderThread),
		op("POST", "/threads/{id}/state", "Set a side state: deferred, obsolete or rejected (authority).", write, (*pircan.Service).SetThreadState, (*Face).renderThread),
		op("POST", "/threads/{id}/pin", "Pin a thread (pinned false: unpin); needs pin.", []string{pircan.RightPin}, (*pircan.Service).PinThread, (*Face).renderThread),
		op("GET", "/inbox", "Threads awaiting a reply from you (extension: from that extension), newest first, none where a human forbade AI reactions; since: a cursor, else the one you acknowledged.",
			none, (*pircan.Service).ForumInbox, (*Face).renderInbox),
		op("POST", "/inbox/ack", "Remember the inbox cursor (per extension): get_inbox without since starts there.", none, (*pircan.Service).AckForumInbox,
			func(_ *Face, a pircan.InboxAck) InboxAck { return InboxAck{Cursor: a.Cursor, Extension: a.Extension} }),
	}, dialecticOperations()...)
}

// lookup is the row of key (nil: none).
func (f *Face) lookup(key string) *operation {
	for i := range f.ops {
		if f.ops[i].key == key {
			return &f.ops[i]
		}
	}
	return nil
}

// OperationInfo is a row as list_api_operations lists it.
type OperationInfo struct {
	Key     string   `json:"key"`
	Method  string   `json:"method"`
	Path    string   `json:"path"`
	Purpose string   `json:"purpose"`
	Rights  []string `json:"rights"`
}

// OperationContract is a row with its schemas (get_api_operation).
type OperationContract struct {
	OperationInfo
	InputSchema  map[string]any `json:"input_schema"`
	OutputSchema map[string]any `json:"output_schema,omitempty"` // none: any object (call_api_operation)
}

func (o operation) info() OperationInfo {
	r := o.rights
	if r == nil {
		r = []string{}
	}
	info := OperationInfo{Key: o.key, Method: o.method, Purpose: o.purpose, Rights: r}
	if o.method != "" { // the catalog's tools are MCP's alone
		info.Path = APIPath + o.path
	}
	return info
}

// catalog arguments and results.
type keyArgs struct {
	Key *string `json:"key" check:"required"`
}

type callArgs struct {
	Key    *string                     `json:"key" check:"required"`
	Params *map[string]json.RawMessage `json:"params"`
}

// Operations is list_api_operations' result.
type Operations struct {
	Items []OperationInfo `json:"items"`
}

func (f *Face) catalog() []operation {
	list := operation{key: "list_api_operations", purpose: "Every operation: key, method, path, purpose and the rights it needs.",
		input: inputSchema(struct{}{}), output: outputSchema[Operations](),
		call: func(_ context.Context, f *Face, _ pircan.Caller, obj map[string]json.RawMessage) (any, error) {
			if err := pircan.DecodeForumArgs(obj, &struct{}{}); err != nil {
				return nil, err
			}
			out := Operations{Items: []OperationInfo{}}
			for _, o := range f.ops {
				out.Items = append(out.Items, o.info())
			}
			return out, nil
		}}
	get := operation{key: "get_api_operation", purpose: "The full contract of one operation: its input and output JSON Schema.",
		input: inputSchema(keyArgs{}), output: outputSchema[OperationContract](),
		call: func(_ context.Context, f *Face, _ pircan.Caller, obj map[string]json.RawMessage) (any, error) {
			o, err := f.keyed(obj)
			if err != nil {
				return nil, err
			}
			c := OperationContract{OperationInfo: o.info(), InputSchema: o.input}
			if o.output != nil {
				b, err := json.Marshal(o.output)
				if err != nil {
					return nil, err
				}
				if err := json.Unmarshal(b, &c.OutputSchema); err != nil {
					return nil, err
				}
			}
			return c, nil
		}}
	call := operation{key: "call_api_operation", purpose: "Run any operation by its key with params, through the same rights check as HTTP; the result is that operation's.",
		input: inputSchema(callArgs{}),
		call: func(ctx context.Context, f *Face, c pircan.Caller, obj map[string]json.RawMessage) (any, error) {
			var a callArgs
			if err := pircan.DecodeForumArgs(obj, &a); err != nil {
				return nil, err
			}
			o, err := f.operationOf(a.Key)
			if err != nil {
				return nil, err
			}
			params := map[string]json.RawMessage{}
			if a.Params != nil {
				params = *a.Params
			}
			return o.call(ctx, f, c, params)
		}}
	return []operation{list, get, call}
}

func (f *Face) keyed(obj map[string]json.RawMessage) (*operation, error) {
	var a keyArgs
	if err := pircan.DecodeForumArgs(obj, &a); err != nil {
		return nil, err
	}
	return f.operationOf(a.Key)
}

// operationOf is the operation a call names by its key.
func (f *Face) operationOf(key *string) (*operation, error) {
	if key == nil {
		return nil, invalidBody("key", pircan.RuleRequired, `"key" is required.`)
	}
	o := f.lookup(*key)
	if o == nil {
		return nil, pircan.Errorf(pircan.CodeOperationNotFound, "No operation %q; see list_api_operations.", *key)
	}
	return o, nil
}

func invalidBody(field, rule, msg string) *pircan.Error {
	e := pircan.FieldError(pircan.CodeInvalidBody, field, "%s", msg)
	e.Rule = rule
	return e
}

// outputSchema is the schema of a result type (plain structs: inference
// cannot fail).
func outputSchema[O any]() *jsonschema.Schema { return toolschema.Output[O]() }

// OperationInfos is the operation table as list_api_operations lists it,
// for the protocol reference (internal/protocoldoc).
func OperationInfos() []OperationInfo {
	var out []OperationInfo
	for _, o := range operations(false) {
		out = append(out, o.info())
	}
	return out
}
