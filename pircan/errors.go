package pircan

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Code is one of the stable error codes: spec §2's and the forum's
// reasons. The string values are the wire values: never rename them.
type Code string

// Every code, in one place; docs/protocol.md lists them by the groups
// below, and ForumReasons gives the forum's their meanings and statuses.
const (
	// Codes of every request (spec §2).
	CodeNotPircan          Code = "not_pircan"
	CodeMissingVerb        Code = "missing_verb"
	CodeUnknownVerb        Code = "unknown_verb"
	CodeInvalidJSON        Code = "invalid_json"
	CodeInvalidID          Code = "invalid_id"
	CodeInvalidArgument    Code = "invalid_argument"
	CodeTooLong            Code = "too_long"
	CodeEmpty              Code = "empty"
	CodeNotIdentified      Code = "not_identified"
	CodeNotRegistered      Code = "not_registered"
	CodeUnknownChannel     Code = "unknown_channel"
	CodeRateLimited        Code = "rate_limited"
	CodeRegistrationPaused Code = "registration_paused"
	CodeNotAuthorized      Code = "not_authorized"
	CodeInternalError      Code = "internal_error"

	// Codes of the handshake and messages (spec §2).
	CodeSelfContact        Code = "self_contact"
	CodeUnknownAgent       Code = "unknown_agent"
	CodeInvalidScope       Code = "invalid_scope"
	CodeDuplicateRequest   Code = "duplicate_request"
	CodeAlreadyAgreed      Code = "already_agreed"
	CodeCooldown           Code = "cooldown"
	CodeTooManyPending     Code = "too_many_pending"
	CodeNotFound           Code = "not_found"
	CodeNotPending         Code = "not_pending"
	CodeNotActive          Code = "not_active"
	CodeLoopLimit          Code = "loop_limit"
	CodeConversationBudget Code = "conversation_budget"

	// Codes of REPORT (spec §2).
	CodeSelfReport      Code = "self_report"
	CodeDuplicateReport Code = "duplicate_report"

	// The forum's refusal reasons (the Parley v1 reference's "Error
	// reasons"); those it shares with the rest of PIRCAN (invalid_json,
	// rate_limited, internal_error, not_found) are the codes above.
	CodeInvalidBody            Code = "invalid_body"
	CodeUnauthenticated        Code = "unauthenticated"
	CodeTokenRequired          Code = "token_required"
	CodeTokenReadOnly          Code = "token_read_only"
	CodeTokenRightMissing      Code = "token_right_missing"
	CodeVerifyRightMissing     Code = "verify_right_missing"
	CodeUserSessionRequired    Code = "user_session_required"
	CodeBoardNotFound          Code = "board_not_found"
	CodeThreadNotFound         Code = "thread_not_found"
	CodeParentNotFound         Code = "parent_not_found"
	CodeThreadClosed           Code = "thread_closed"
	CodeThreadAuthorityMissing Code = "thread_authority_missing"
	CodeSelfReply              Code = "self_reply"
	CodeStateInvalid           Code = "state_invalid"
	CodeStateNotSettable       Code = "state_not_settable"
	CodeNothingToConfirm       Code = "nothing_to_confirm"
	CodeLLMReplyForbidden      Code = "llm_reply_forbidden"
	CodePayloadTooLarge        Code = "payload_too_large"
	CodeUnknownEndpoint        Code = "unknown_endpoint"
	CodeUnknownTool            Code = "unknown_tool"
	CodeOperationNotFound      Code = "operation_not_found"
	CodeForbidden              Code = "forbidden"
	CodeConflict               Code = "conflict"
	// Reasons of the dialectic profile.
	CodeClaimNotFound    Code = "claim_not_found"
	CodeEvidenceRequired Code = "evidence_required"
	CodeClaimSuperseded  Code = "claim_superseded"
	// Reasons of access requests.
	CodeRequestNotFound  Code = "request_not_found"
	CodeRequestForbidden Code = "request_forbidden"
	CodeRequestDecided   Code = "request_decided"
)

// Error is a protocol error: it carries everything its ERROR reply needs.
type Error struct {
	Code    Code
	Message string
	Field   string // the offending JSON field, for invalid_argument / empty / too_long
	// Rule names the rule a field broke (the forum's invalid_body
	// details.rule: required, type, length, …).
	Rule string
	Ref  string // internal_error: the reference logged beside the cause (AsError)
	// RetryAfter: a rate_limited refusal's wait until the window passes.
	RetryAfter time.Duration
	// Next: what the caller can do about it, which each face says in its
	// own words after Message (IRC a verb, MCP a tool); Message names no face.
	Next Next
}

// Next names a caller's next step after a refusal, in no face's words.
type Next string

// The next steps refusals point to.
const (
	NextRegister   Next = "register"   // register the account's agent
	NextFind       Next = "find"       // search the directory
	NextChannels   Next = "channels"   // list the channels
	NextContacts   Next = "contacts"   // list the contact requests
	NextAgreements Next = "agreements" // list the agreements
	NextContact    Next = "contact"    // ask for an agreement
	NextResources  Next = "resources"  // list the resources
	NextTasks      Next = "tasks"      // list the tasks
)

// Say is the refusal's message with its next step in a face's words
// (hints: Next to a sentence); a step the face has no words for is left out.
func (e *Error) Say(hints map[Next]string) string {
	if h := hints[e.Next]; h != "" {
		return e.Message + " " + h
	}
	return e.Message
}

// Then sets the refusal's next step and returns it.
func (e *Error) Then(n Next) *Error {
	e.Next = n
	return e
}

// RetryAfterSeconds is a refusal's wait in whole seconds as every face
// shows it (IRC's and MCP's retry_after, A2A's data, the portal's
// Retry-After): rounded up, so never 0 for a wait; 0 only when there is none.
func (e *Error) RetryAfterSeconds() int {
	if e.RetryAfter <= 0 {
		return 0
	}
	return int((e.RetryAfter + time.Second - 1) / time.Second)
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s (%s): %s", e.Code, e.Field, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf builds a protocol error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldError builds a protocol error about one argument field.
func FieldError(code Code, field, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Errors the store returns from inside its transactions, for facts only a
// query sees (a row gone or locked away, a unique index, a count reached);
// the operations turn each into a protocol error or a forum reason, in
// their own words.
var (
	ErrNotFound         = errors.New("not found")
	ErrConflict         = errors.New("conflict")
	ErrUnknownAgent     = errors.New("unknown agent")
	ErrDuplicateRequest = errors.New("duplicate request")
	ErrTooManyPending   = errors.New("too many pending")
	ErrRateLimited      = errors.New("rate limited")
	ErrNotPending       = errors.New("not pending")
	ErrNotActive        = errors.New("not active")
	ErrNotAuthorized    = errors.New("not authorized")
	ErrInvalidGrant     = errors.New("grant exceeds request") // ACCEPT asked for more than requested
	// The unique index's backstop when two reports on one agent race past
	// the rule.
	ErrDuplicateReport = errors.New("duplicate report")
	// The agent's resources would pass their total size.
	ErrTooLarge = errors.New("too large")
	// Too many new registrations in the last hour.
	ErrRegistrationPaused = errors.New("registration paused")

	// The forum's.
	ErrBoardNotFound       = errors.New("board not found")
	ErrThreadNotFound      = errors.New("thread not found")
	ErrParentNotFound      = errors.New("parent not found")
	ErrRelatedNotFound     = errors.New("related key not found")
	ErrForumThreadsHour    = errors.New("threads per hour")
	ErrForumMessagesHour   = errors.New("messages per hour")
	ErrClaimNotFound       = errors.New("claim not found")
	ErrApplicationsAddress = errors.New("applications per address")
	ErrApplicationsHour    = errors.New("applications per hour")
)

// AsError is err as the protocol error a face shows: a protocol error as it
// is; anything else (a store failure, a timeout) is internal_error with a
// fresh Ref, which the face logs beside err so that an operator can find
// it from what the caller quotes.
func AsError(err error) *Error {
	var perr *Error
	if errors.As(err, &perr) && perr != nil {
		return perr
	}
	return &Error{Code: CodeInternalError, Message: "Something went wrong on our side; quote the ref to the operator.", Ref: newRef()}
}

func newRef() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
