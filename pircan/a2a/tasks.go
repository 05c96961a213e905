package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/creatimus/pircan/pircan"
)

// The four methods. Each reads its params leniently (A2A §5.7: unknown
// fields are ignored), checks what A2A itself requires, and leaves every
// PIRCAN rule (sizes, grants, limits) to the core operation.

type sendParams struct {
	Message *struct {
		MessageID string                       `json:"messageId"`
		ContextID string                       `json:"contextId"`
		TaskID    string                       `json:"taskId"`
		Role      string                       `json:"role"`
		Parts     []map[string]json.RawMessage `json:"parts"`
		Metadata  map[string]json.RawMessage   `json:"metadata"`
	} `json:"message"`
	Configuration *struct {
		HistoryLength *int `json:"historyLength"`
	} `json:"configuration"`
}

// sendFields names, in A2A's terms, the core's argument fields.
var sendFields = map[string]string{"text": "message.parts", "skill": "message.metadata.skill", "to": "agent_id"}

// sendMessage files a task for the agent of the URL from the caller's
// agent, and returns it at once (SendMessageResponse {task}): the target
// answers on its own time, so the call never blocks, whatever
// configuration.returnImmediately says.
func sendMessage(ctx context.Context, f *Face, c pircan.Caller, agentID string, raw json.RawMessage) (any, error) {
	var p sendParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, protocolError(jsonrpc.CodeInvalidParams, "invalid_params", "Invalid params: %v.", err)
	}
	m := p.Message
	if m == nil {
		return nil, invalidParams("message", "SendMessage needs a message.")
	}
	if m.TaskID != "" {
		return nil, protocolError(CodeUnsupportedOperation, "unsupported_operation",
			"A PIRCAN task is one message and one answer: send a new message without taskId.")
	}
	if m.ContextID != "" {
		return nil, invalidParams("message.contextId", "PIRCAN chooses the context (the agreement of the task): send the message without contextId.")
	}
	if m.Role != RoleUser {
		return nil, invalidParams("message.role", "The message's role must be %s.", RoleUser)
	}
	text, rerr := messageText(m.Parts)
	if rerr != nil {
		return nil, rerr
	}
	args := pircan.SendTaskArgs{To: &agentID, Text: &text}
	if s, ok := m.Metadata["skill"]; ok && !pircan.IsNull(s) {
		var skill string
		if err := json.Unmarshal(s, &skill); err != nil {
			return nil, invalidParams("message.metadata.skill", "The skill is a string, as in a task:<skill> scope.")
		}
		args.Skill = &skill
	}
	t, err := f.core.SendTask(ctx, c, args)
	if err != nil {
		return nil, renamed(err, sendFields)
	}
	v := fullView
	if p.Configuration != nil && p.Configuration.HistoryLength != nil {
		v.history = *p.Configuration.HistoryLength
	}
	return map[string]any{"task": renderTask(t, v)}, nil
}

// messageText joins the text parts with newlines; any other part (raw,
// url, data, or a media type other than text/plain) is refused.
func messageText(parts []map[string]json.RawMessage) (string, *rpcError) {
	if len(parts) == 0 {
		return "", invalidParams("message.parts", "The message needs at least one text part.")
	}
	texts := make([]string, 0, len(parts))
	for i, part := range parts {
		raw, ok := part["text"]
		var s string
		if !ok || json.Unmarshal(raw, &s) != nil {
			return "", protocolError(CodeContentTypeNotSupport, "content_type_not_supported",
				"Part %d is not text: PIRCAN tasks take text/plain parts only.", i)
		}
		if mt, ok := part["mediaType"]; ok {
			var media string
			_ = json.Unmarshal(mt, &media)
			if base, _, _ := strings.Cut(media, ";"); media != "" && strings.TrimSpace(strings.ToLower(base)) != textPlain {
				return "", protocolError(CodeContentTypeNotSupport, "content_type_not_supported",
					"Part %d is %s: PIRCAN tasks take text/plain parts only.", i, media)
			}
		}
		texts = append(texts, s)
	}
	return strings.Join(texts, "\n"), nil
}

type taskParams struct {
	ID            *string `json:"id"`
	HistoryLength *int    `json:"historyLength"`
}

var taskFields = map[string]string{"task_id": "id"}

// errNoTask is TaskNotFound for a task that is not the caller's to this
// agent: the same words as the core's, whether it exists or not.
var errNoTask = pircan.FieldError(pircan.CodeNotFound, "id", "No such task of yours with this agent.")

// ownTask reads a task the caller asked of agentID.
func ownTask(ctx context.Context, f *Face, c pircan.Caller, agentID string, raw json.RawMessage) (pircan.Task, taskParams, error) {
	var p taskParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return pircan.Task{}, p, protocolError(jsonrpc.CodeInvalidParams, "invalid_params", "Invalid params: %v.", err)
	}
	if p.ID == nil || *p.ID == "" {
		return pircan.Task{}, p, invalidParams("id", "Name the task: params.id.")
	}
	t, err := f.core.GetTask(ctx, c, pircan.TaskArgs{TaskID: p.ID})
	if err != nil {
		return pircan.Task{}, p, renamed(err, taskFields)
	}
	if t.From.AgentID != c.Agent.ID || t.To.AgentID != agentID {
		return pircan.Task{}, p, errNoTask
	}
	return t, p, nil
}

func historyView(n *int) view {
	v := fullView
	if n != nil {
		v.history = *n
	}
	return v
}

// getTask is one task the caller asked of this agent.
func getTask(ctx context.Context, f *Face, c pircan.Caller, agentID string, raw json.RawMessage) (any, error) {
	t, p, err := ownTask(ctx, f, c, agentID, raw)
	if err != nil {
		return nil, err
	}
	return renderTask(t, historyView(p.HistoryLength)), nil
}

// cancelTask cancels an open task the caller asked of this agent; one
// already answered or canceled is TaskNotCancelable.
func cancelTask(ctx context.Context, f *Face, c pircan.Caller, agentID string, raw json.RawMessage) (any, error) {
	_, p, err := ownTask(ctx, f, c, agentID, raw)
	if err != nil {
		return nil, err
	}
	t, err := f.core.CancelTask(ctx, c, pircan.TaskArgs{TaskID: p.ID})
	if err != nil {
		return nil, renamed(err, taskFields)
	}
	return renderTask(t, fullView), nil
}

type listParams struct {
	ContextID            string `json:"contextId"`
	Status               string `json:"status"`
	PageSize             *int   `json:"pageSize"`
	PageToken            string `json:"pageToken"`
	HistoryLength        *int   `json:"historyLength"`
	StatusTimestampAfter string `json:"statusTimestampAfter"`
	IncludeArtifacts     bool   `json:"includeArtifacts"`
}

// ListTasks paging (A2A §3.1.4): pages of 1 to 100 tasks, 50 by default.
// A page holds at most the core's page (pircan.MaxPage), with a
// nextPageToken while more match.
const (
	defaultPageSize = 50
	maxPageSize     = 100
)

// listTasks pages through the tasks the caller asked of this agent, in the
// core's order (open ones first, then newest first), filtered by the core
// (the agent, contextId, statusTimestampAfter), so totalSize is exact. The
// page token is the offset in that list.
func listTasks(ctx context.Context, f *Face, c pircan.Caller, agentID string, raw json.RawMessage) (any, error) {
	var p listParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, protocolError(jsonrpc.CodeInvalidParams, "invalid_params", "Invalid params: %v.", err)
	}
	size := defaultPageSize
	if p.PageSize != nil {
		if *p.PageSize < 1 || *p.PageSize > maxPageSize {
			return nil, invalidParams("pageSize", "pageSize is 1 to %d.", maxPageSize)
		}
		size = *p.PageSize
	}
	status := "any"
	never := false // a state PIRCAN tasks are never in
	switch p.Status {
	case "", "TASK_STATE_UNSPECIFIED":
	case "TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED":
		never = true
	default:
		s, ok := coreStates[p.Status]
		if !ok {
			return nil, invalidParams("status", "Unknown status %q: one of TASK_STATE_SUBMITTED, TASK_STATE_COMPLETED, TASK_STATE_FAILED, TASK_STATE_REJECTED, TASK_STATE_CANCELED (or WORKING, INPUT_REQUIRED, AUTH_REQUIRED, which PIRCAN tasks never are).", p.Status)
		}
		status = s
	}
	var after time.Time
	if p.StatusTimestampAfter != "" {
		t, err := time.Parse(time.RFC3339Nano, p.StatusTimestampAfter)
		if err != nil {
			return nil, invalidParams("statusTimestampAfter", "statusTimestampAfter is an ISO 8601 time, such as 2025-10-28T10:30:00.000Z.")
		}
		after = t
	}
	offset := 0
	if p.PageToken != "" {
		n, err := strconv.Atoi(p.PageToken)
		if err != nil || n < 0 {
			return nil, invalidParams("pageToken", "Pass pageToken as the previous page's nextPageToken.")
		}
		offset = n
	}
	v := historyView(p.HistoryLength)
	v.artifacts = p.IncludeArtifacts
	page := listPage{Tasks: []Task{}, PageSize: size}
	if never {
		return page, nil
	}
	if p.ContextID != "" && !pircan.ValidID(p.ContextID) {
		return page, nil // a contextId PIRCAN never gave names no task
	}
	dir, limit := "outgoing", min(size, pircan.MaxPage)
	a := pircan.ListTasksArgs{Direction: &dir, Status: &status, PageArgs: pircan.PageArgs{Limit: &limit, Offset: &offset}, With: &agentID}
	if p.ContextID != "" {
		a.AgreementID = &p.ContextID
	}
	if !after.IsZero() {
		a.ChangedSince = &after
	}
	res, err := f.core.Tasks(ctx, c, a)
	if err != nil {
		return nil, renamed(err, map[string]string{"offset": "pageToken"})
	}
	for _, t := range res.Items {
		page.Tasks = append(page.Tasks, renderTask(t, v))
	}
	if next := offset + len(res.Items); next < res.Total {
		page.NextPageToken = strconv.Itoa(next)
	}
	page.TotalSize = res.Total
	return page, nil
}

// listPage is A2A's ListTasksResponse; nextPageToken is always present.
type listPage struct {
	Tasks         []Task `json:"tasks"`
	NextPageToken string `json:"nextPageToken"`
	PageSize      int    `json:"pageSize"`
	TotalSize     int    `json:"totalSize"`
}

// renamed is a core refusal with its field named as A2A's params name it;
// anything else (an internal error) goes on as it is, for the log.
func renamed(err error, fields map[string]string) error {
	var perr *pircan.Error
	if !errors.As(err, &perr) {
		return err
	}
	if to, ok := fields[perr.Field]; ok {
		c := *perr
		c.Field = to
		return &c
	}
	return err
}
