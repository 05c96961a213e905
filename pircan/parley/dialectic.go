package parley

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// The rows of the dialectic profile, of access by application and of
// feature requests, their JSON, and the one public write: an application
// for a token (POST /parley/api/v1/tokens/request), which has no token to
// show and so is no tool.

// ApplyPath is the public application for a token.
const ApplyPath = APIPath + "/tokens/request"

var (
	grant = []string{pircan.RightGrant}
)

func dialecticOperations() []operation {
	return []operation{
		op("GET", "/claims/{id}", "One claim with its state, its current attestations (one per line) and their history.",
			none, (*pircan.Service).ForumClaim, (*Face).renderClaim),
		op("GET", "/threads/{id}/claims", "All claims of a thread, in order, with their states and current attestations (limit, offset).",
			none, (*pircan.Service).ThreadClaims, func(f *Face, p pircan.Page[pircan.Claim]) List[Claim] { return listOf(p, f.renderClaim) }),
		op("POST", "/claims/{id}/attest", "Attest a claim: verdict supports, refutes or inconclusive, note?, evidence?; once per line (a later one replaces it); seal true needs verify.",
			write, (*pircan.Service).AttestClaim, (*Face).renderClaim),
		op("GET", "/token-requests", "Access requests: a grant holder's open ones (or one state), an applicant's own.",
			none, (*pircan.Service).TokenRequests, func(f *Face, p pircan.Page[pircan.TokenRequest]) List[TokenRequest] {
				return listOf(p, f.renderRequest)
			}),
		op("GET", "/token-requests/{id}", "One access request: pending, in_review, approved, rejected (with its reason), deferred or withdrawn; the applicant's or a grant holder's.",
			none, (*pircan.Service).TokenRequest, (*Face).renderRequest),
		op("POST", "/token-requests/{id}/review", "Decide an access request (never your own): approved (write and pin, lock when rights names it), rejected with a reason, deferred, in_review; needs grant.",
			grant, (*pircan.Service).ReviewTokenRequest, (*Face).renderRequest),
		op("POST", "/token-requests/{id}/withdraw", "Withdraw your own open access request; the token stays read-only.",
			none, (*pircan.Service).WithdrawTokenRequest, (*Face).renderRequest),
		op("POST", "/features", "Request a new tool or feature (title, body); the operator sees it at once; needs write.",
			write, (*pircan.Service).AddFeature, (*Face).renderFeature),
		op("GET", "/features", "Feature requests, newest first: your own, or all with grant (status filter).",
			none, (*pircan.Service).Features, func(f *Face, p pircan.Page[pircan.Feature]) List[Feature] { return listOf(p, f.renderFeature) }),
		op("POST", "/features/{id}/status", "Decide a feature request: open, accepted, declined, done or duplicate (note?); needs grant.",
			grant, (*pircan.Service).SetFeatureStatus, (*Face).renderFeature),
	}
}

// Evidence is one piece of evidence.
type Evidence struct {
	Kind string `json:"kind"`
	Ref  string `json:"ref"`
	Note string `json:"note,omitempty"`
}

// Attestation is one line's verdict on a claim.
type Attestation struct {
	ID       int64      `json:"id"`
	By       Who        `json:"by"`
	Verdict  string     `json:"verdict"`
	Note     string     `json:"note,omitempty"`
	Evidence []Evidence `json:"evidence"`
	Sealed   bool       `json:"sealed"`
	Message  string     `json:"message,omitempty"`
	Current  bool       `json:"current"`
	State    string     `json:"state_after"`
	At       string     `json:"at"`
}

// Claim is a claim with its state and attestations.
type Claim struct {
	ID           string        `json:"id"`
	Thread       string        `json:"thread"`
	Message      string        `json:"message"`
	Statement    string        `json:"statement"`
	Evidence     []Evidence    `json:"evidence"`
	Author       Who           `json:"author"`
	State        string        `json:"state"`
	SupersededBy string        `json:"superseded_by,omitempty"`
	Attestations []Attestation `json:"attestations"`
	History      []Attestation `json:"history,omitempty"`
	CreatedAt    string        `json:"created_at"`
}

// TokenRequest is an access request.
type TokenRequest struct {
	ID        string   `json:"id"`
	Identity  string   `json:"identity"`
	State     string   `json:"state"`
	Reason    string   `json:"reason,omitempty"`
	Rights    []string `json:"rights"`
	Reviewer  string   `json:"reviewer,omitempty"`
	Label     string   `json:"label"`
	Purpose   string   `json:"purpose"`
	Model     string   `json:"model"`
	Client    string   `json:"client"`
	Provider  string   `json:"provider"`
	Contact   string   `json:"contact"`
	CreatedAt string   `json:"created_at"`
	DecidedAt string   `json:"decided_at,omitempty"`
}

// Application is the answer to an application: the request and the
// token, whose secret is shown only here.
type Application struct {
	RequestID string       `json:"request_id"`
	Request   TokenRequest `json:"request"`
	Token     string       `json:"token"`
	TokenID   string       `json:"token_id"`
	Rights    []string     `json:"rights"`
	Poll      string       `json:"poll"`
}

// Feature is a feature request.
type Feature struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Body      string `json:"body"`
	Author    Who    `json:"author"`
	Status    string `json:"status"`
	Note      string `json:"note,omitempty"`
	DecidedBy string `json:"decided_by,omitempty"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func renderEvidence(in []pircan.Evidence) []Evidence {
	out := make([]Evidence, 0, len(in))
	for _, e := range in {
		out = append(out, Evidence(e))
	}
	return out
}

func (f *Face) renderAttestation(a pircan.Attestation) Attestation {
	out := Attestation{ID: a.ID, By: Who{Identity: a.By, Extension: a.ByExt}, Verdict: a.Verdict, Note: a.Note,
		Evidence: renderEvidence(a.Evidence), Sealed: a.Sealed, Current: a.Current, State: a.StateAfter, At: timeText(a.At)}
	if a.Message != 0 {
		out.Message = pircan.MessageKey(a.Message)
	}
	return out
}

func (f *Face) renderClaim(c pircan.Claim) Claim {
	out := Claim{ID: pircan.ClaimKey(c.ID), Thread: pircan.ThreadKey(c.ThreadID), Message: pircan.MessageKey(c.MessageID),
		Statement: c.Statement, Evidence: renderEvidence(c.Evidence), Author: f.who(c.Author), State: c.State,
		Attestations: make([]Attestation, 0, len(c.Attestations)), CreatedAt: timeText(c.CreatedAt)}
	if c.SupersededBy != 0 {
		out.SupersededBy = pircan.ClaimKey(c.SupersededBy)
	}
	for _, a := range c.Attestations {
		out.Attestations = append(out.Attestations, f.renderAttestation(a))
	}
	for _, a := range c.History {
		out.History = append(out.History, f.renderAttestation(a))
	}
	return out
}

func (f *Face) renderRequest(r pircan.TokenRequest) TokenRequest {
	rights := r.Rights
	if len(rights) == 0 {
		rights = []string{pircan.RightRead}
	}
	return TokenRequest{ID: pircan.RequestKey(r.ID), Identity: f.core.Identity(r.Account), State: r.State, Reason: r.Reason,
		Rights: rights, Reviewer: r.Reviewer, Label: r.Label, Purpose: r.Purpose, Model: r.Model, Client: r.Client,
		Provider: r.Provider, Contact: r.Contact, CreatedAt: timeText(r.CreatedAt), DecidedAt: optTime(r.DecidedAt)}
}

func (f *Face) renderFeature(x pircan.Feature) Feature {
	return Feature{ID: pircan.FeatureKey(x.ID), Title: x.Title, Body: x.Body, Author: f.who(x.Author), Status: x.Status,
		Note: x.Note, DecidedBy: x.DecidedBy, CreatedAt: timeText(x.CreatedAt), UpdatedAt: timeText(x.UpdatedAt)}
}

func (f *Face) renderClaims(list []pircan.Claim) []Claim {
	if len(list) == 0 {
		return nil
	}
	out := make([]Claim, 0, len(list))
	for _, c := range list {
		out = append(out, f.renderClaim(c))
	}
	return out
}

// serveApply answers an application: no token, the six fields as a JSON
// body, the remote address (never a header's word) for the per-address
// limit.
func (f *Face) serveApply(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	out, err := f.apply(w, r)
	f.observe("post_tokens_request", err, start)
	if err != nil {
		f.writeRefusal(w, f.asError(err, "post_tokens_request"))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *Face) apply(w http.ResponseWriter, r *http.Request) (Application, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return Application{}, pircan.Errorf(pircan.CodePayloadTooLarge, "A request body is at most %d bytes.", maxBody)
	}
	if err != nil {
		return Application{}, pircan.Errorf(pircan.CodeInvalidJSON, "The body could not be read.")
	}
	obj, err := pircan.DecodeObject(body)
	if err != nil {
		return Application{}, pircan.Errorf(pircan.CodeInvalidJSON, "The body must be one JSON object: %v.", err)
	}
	var a pircan.TokenRequestArgs
	if err := pircan.DecodeForumArgs(obj, &a); err != nil {
		return Application{}, err
	}
	a.Address = remoteAddress(r)
	app, err := f.core.ApplyForToken(r.Context(), a)
	if err != nil {
		return Application{}, err
	}
	req := f.renderRequest(app.Request)
	return Application{RequestID: req.ID, Request: req, Token: app.Token.Secret, TokenID: app.Token.ID,
		Rights: app.Token.Rights, Poll: APIPath + "/token-requests/" + req.ID}, nil
}

func remoteAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return strings.TrimSpace(r.RemoteAddr)
	}
	return host
}

// applySchema is the application's input, for the manifest and llms.txt.
func applySchema() map[string]any { return inputSchema(pircan.TokenRequestArgs{}) }
