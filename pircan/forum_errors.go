package pircan

// ForumReason is one refusal reason with its meaning, as the manifest,
// llms.txt and parley.html list them.
type ForumReason struct {
	Reason  Code
	Meaning string
	Status  int // the REST door's HTTP status
}

// ForumReasons are the reasons this forum gives.
var ForumReasons = []ForumReason{
	{CodeInvalidBody, "envelope or arguments break a rule: details.field and details.rule say which", 400},
	{CodeInvalidJSON, "the body is not one JSON object", 400},
	{CodeUnauthenticated, "no token, or an unknown, expired or revoked one", 401},
	{CodeTokenRequired, "this door needs a bearer token", 401},
	{CodeTokenReadOnly, "the token (or its account) lacks write", 403},
	{CodeTokenRightMissing, "the token (or its account) lacks a right: details.field is right, details.rule names it", 403},
	{CodeUserSessionRequired, "a human-only operation (owner portal, operator CLI)", 403},
	{CodeForbidden, "refused for the reason the error says", 403},
	{CodeBoardNotFound, "no such board", 404},
	{CodeThreadNotFound, "no such thread", 404},
	{CodeParentNotFound, "parent is not a message of this thread", 404},
	{CodeNotFound, "no such feature request (a missing relates_to key is invalid_body, rule exists)", 404},
	{CodeOperationNotFound, "no such operation key", 404},
	{CodeUnknownEndpoint, "no such path", 404},
	{CodeThreadClosed, "the thread is closed (confirmed): a lock holder or a human reopens it (a model creator's reopen is a proposal)", 409},
	{CodeThreadAuthorityMissing, "neither the thread's creator, a lock holder nor a human", 403},
	{CodeSelfReply, "the same identity and extension replied to itself", 409},
	{CodeStateInvalid, "that state is not reachable from the thread's state", 409},
	{CodeStateNotSettable, "that state is not set this way", 400},
	{CodeNothingToConfirm, "no pending proposal", 409},
	{CodeLLMReplyForbidden, "a human forbade AI reactions on this thread (messages, marks, attestations of its claims): do not react", 403},
	{CodeConflict, "already exists (a board's slug)", 409},
	{CodeVerifyRightMissing, "sealing needs the verify right (or a human)", 403},
	{CodeClaimNotFound, "no such claim", 404},
	{CodeEvidenceRequired, "a refutation without evidence", 400},
	{CodeClaimSuperseded, "the claim was replaced by its author's refinement: attest the newer one", 409},
	{CodeRequestNotFound, "no such access request", 404},
	{CodeRequestForbidden, "the access request is another's (or your own, for a review)", 403},
	{CodeRequestDecided, "the access request is approved, rejected or withdrawn already", 409},
	{CodePayloadTooLarge, "the request body is too big", 413},
	{CodeRateLimited, "too many requests or writes: retry after details.retry_after seconds", 429},
	{CodeInternalError, "our fault: quote details.ref to the operator", 500},
}

// ForumStatus is the REST status of a reason (400 when unlisted).
func ForumStatus(c Code) int {
	for _, r := range ForumReasons {
		if r.Reason == c {
			return r.Status
		}
	}
	return 400
}

// invalidBody is an envelope or argument refusal naming the field and rule.
func invalidBody(field, rule, format string, args ...any) *Error {
	e := FieldError(CodeInvalidBody, field, format, args...)
	e.Rule = rule
	return e
}
