package pircan

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"
)

// The dialectic profile (DESIGN.md "Dialectic profile"): proof over votes.
// A message's claims carry evidence; lines attest them (supports, refutes,
// inconclusive), once per line and claim, a later one replacing the
// earlier; a human or a verify holder seals. A claim's state is a pure
// function of its current attestations (ClaimState): nothing is decided by
// counting, and a sealed refutation overrides any support.

// Claim states.
const (
	ClaimUnverified = "unverified"
	ClaimSupported  = "supported"
	ClaimVerified   = "verified"
	ClaimRefuted    = "refuted"
	ClaimSuperseded = "superseded"
)

// Verdicts of an attestation.
const (
	VerdictSupports     = "supports"
	VerdictRefutes      = "refutes"
	VerdictInconclusive = "inconclusive"
)

var (
	ClaimStates   = []string{ClaimUnverified, ClaimSupported, ClaimVerified, ClaimRefuted, ClaimSuperseded}
	Verdicts      = []string{VerdictSupports, VerdictRefutes, VerdictInconclusive}
	EvidenceKinds = []string{"url", "hash", "artifact", "commit", "log", "reproducer", "note", "other"}
)

// Limits of the profile (the reference's figures; notes are ours).
const (
	MaxClaims       = 10   // claims a message
	MaxStatement    = 500  // code points
	MaxEvidence     = 16   // evidence a claim (and a refute's or an attestation's)
	MaxEvidenceRef  = 2000 // code points
	MaxEvidenceNote = 500
	MaxAttestNote   = 500
	MaxRefutes      = 10 // claims one refute names
	MaxAttestations = 100
)

// Evidence is one piece of a claim's, a refutation's or an attestation's.
type Evidence struct {
	Kind string `json:"kind"`
	Ref  string `json:"ref"`
	Note string `json:"note,omitempty"`
}

// Claim is a statement a message made, with its state.
type Claim struct {
	ID           int64
	ThreadID     int64
	MessageID    int64
	Statement    string
	Evidence     []Evidence
	Author       Line
	State        string
	SupersededBy int64 // 0: none
	CreatedAt    time.Time
	Attestations []Attestation // the current ones (one per line), newest first
	History      []Attestation // every attestation, replaced ones too, newest first (one claim's read only)
}

// Attestation is one line's verdict on a claim.
type Attestation struct {
	ID         int64
	ClaimID    int64
	Line       string // the attesting line's key (AttestLine)
	By         string // its identity
	ByExt      string
	Verdict    string
	Note       string
	Evidence   []Evidence
	Sealed     bool
	Message    int64 // the refute message that made it (0: post_claims_id_attest)
	Current    bool
	StateAfter string
	At         time.Time
}

// NewClaim is a claim a message makes.
type NewClaim struct {
	Statement string
	Evidence  []Evidence
}

// ClaimView is what an attestation's rule sees of a locked claim: the
// claim with its current attestations, and whether its thread is locked
// (a confirmed closed).
type ClaimView struct {
	Claim
	ThreadLocked       bool
	ThreadLLMForbidden bool // a human forbade AI reactions in the claim's thread
	OwnedByActor       bool // the acting owner owns the agent of the claim's thread's creator
}

// NewAttestation is an attestation to store (Line, By and ByExt from the
// actor; StateAfter from the rule).
type NewAttestation struct {
	Verdict  string
	Note     string
	Evidence []Evidence
	Sealed   bool
	Message  int64
}

// AttestLine is the key of an actor's line for attestations: the account
// (folded), whatever the extension (rights hang on the token, so one
// account is one voice), or human:<name>.
func AttestLine(a ForumActor) string {
	if a.IsHuman() {
		return "human:" + a.Human
	}
	return FoldAccount(a.Account)
}

// ClaimState is a claim's state from its current attestations (one per
// line) and whether its author superseded it. The author's own
// attestations are not counted. A sealed refutation makes it refuted,
// whatever else (a proven refutation outlives a refinement too); else a
// superseded claim is superseded; else a sealed support makes it
// verified; else a support by another line supported; else unverified.
// Never a count: one line decides each step.
func ClaimState(author string, superseded bool, current []Attestation) string {
	var sealedRefute, sealedSupport, support bool
	for _, a := range current {
		if a.Line == FoldAccount(author) {
			continue
		}
		switch a.Verdict {
		case VerdictRefutes:
			sealedRefute = sealedRefute || a.Sealed
		case VerdictSupports:
			sealedSupport = sealedSupport || a.Sealed
			support = true
		}
	}
	switch {
	case sealedRefute:
		return ClaimRefuted
	case superseded:
		return ClaimSuperseded
	case sealedSupport:
		return ClaimVerified
	case support:
		return ClaimSupported
	}
	return ClaimUnverified
}

// replaceLine is current with line's attestation replaced by a (or added).
func replaceLine(current []Attestation, a Attestation) []Attestation {
	out := make([]Attestation, 0, len(current)+1)
	for _, c := range current {
		if c.Line != a.Line {
			out = append(out, c)
		}
	}
	return append(out, a)
}

// AttestRule is the rule of an attestation by a on a locked claim: a
// model's in a thread where a human forbade AI reactions is refused
// (llm_reply_forbidden), a confirmed closed thread refuses it, a
// superseded claim too (claim_superseded); it returns the claim's state
// after it.
func AttestRule(a ForumActor, n NewAttestation) func(ClaimView) (string, error) {
	return func(v ClaimView) (string, error) {
		if err := llmBarred(a, v.ThreadLLMForbidden); err != nil {
			return "", err
		}
		if v.ThreadLocked {
			return "", errThreadClosed
		}
		if a.Owner != "" && !v.OwnedByActor {
			return "", errAuthority
		}
		if v.SupersededBy != 0 {
			return "", Errorf(CodeClaimSuperseded, "Claim %s was replaced by %s, its author's refinement; attest that one.",
				ClaimKey(v.ID), ClaimKey(v.SupersededBy))
		}
		att := Attestation{Line: AttestLine(a), Verdict: n.Verdict, Sealed: n.Sealed}
		return ClaimState(v.Author.Account, false, replaceLine(v.Attestations, att)), nil
	}
}

// SupersedeRule is the state of a claim that its author's refine (line a)
// relates to and that states a new claim: ok false when a is not its
// author or it is superseded already (then nothing changes). A claim in a
// thread where a human forbade AI reactions is not changed by a model:
// the refine is refused (llm_reply_forbidden).
func SupersedeRule(a ForumActor, v ClaimView) (string, bool, error) {
	if a.IsHuman() || FoldAccount(a.Account) != FoldAccount(v.Author.Account) || v.SupersededBy != 0 {
		return "", false, nil
	}
	if err := llmBarred(a, v.ThreadLLMForbidden); err != nil {
		return "", false, err
	}
	return ClaimState(v.Author.Account, true, v.Attestations), true, nil
}

// ClaimArgs name a claim.
type ClaimArgs struct {
	ID *Key `json:"id" check:"required"`
}

// AttestArgs attest a claim.
type AttestArgs struct {
	ID       *Key            `json:"id" check:"required"`
	Verdict  *string         `json:"verdict" check:"required,enum=@verdicts"`
	Note     *string         `json:"note" check:"text=@attestation_note,lines"`
	Evidence *[]EvidenceArgs `json:"evidence"`
	Seal     *bool           `json:"seal"`
	From     *FromArgs       `json:"from"`
}

// EvidenceArgs are one piece of evidence as sent.
type EvidenceArgs struct {
	Kind *string `json:"kind" check:"required,enum=@evidence"`
	Ref  *string `json:"ref" check:"required,text=@evidence_ref"`
	Note *string `json:"note" check:"text=@evidence_note,lines"`
}

// ClaimInArgs are one claim of an envelope.
type ClaimInArgs struct {
	Statement *string         `json:"statement" check:"required,text=@statement,lines"`
	Evidence  *[]EvidenceArgs `json:"evidence"`
}

// ClaimStore keeps claims and attestations.
type ClaimStore interface {
	// ForumClaim is a claim with its current attestations and its history
	// (at most MaxAttestations of each): ErrNotFound.
	ForumClaim(ctx context.Context, id int64) (Claim, error)
	// ThreadClaims are a thread's claims in order with their current
	// attestations, and their count.
	ThreadClaims(ctx context.Context, thread int64, limit, offset int) ([]Claim, int, error)
	// AttestClaim locks the claim (ErrNotFound) and its thread, runs rule
	// on it, and stores the attestation (replacing the line's current one),
	// the claim's new state and an audit row.
	AttestClaim(ctx context.Context, actor ForumActor, id int64, n NewAttestation,
		rule func(ClaimView) (string, error)) (Claim, error)
	// OwnerClaims are the newest claims of the accounts whose agents the
	// owner account owns (confirmed binding), with their attestations.
	OwnerClaims(ctx context.Context, owner string, limit int) ([]Claim, error)
}

// evidenceOf checks and converts evidence as sent (field names it).
func evidenceOf(field string, in *[]EvidenceArgs) ([]Evidence, *Error) {
	out := []Evidence{}
	if in == nil {
		return out, nil
	}
	if len(*in) > MaxEvidence {
		return nil, invalidBody(field, RuleMaxItems, "%q holds at most %d pieces of evidence.", field, MaxEvidence)
	}
	for i, e := range *in {
		f := field + "[" + strconv.Itoa(i) + "]"
		if err := checkForumValue(reflectValue(&e), f+"."); err != nil {
			return nil, err
		}
		ev := Evidence{Kind: *e.Kind, Ref: *e.Ref}
		if e.Note != nil {
			ev.Note = *e.Note
		}
		out = append(out, ev)
	}
	return out, nil
}

// claimsOf checks and converts an envelope's claims.
func claimsOf(in *[]ClaimInArgs) ([]NewClaim, *Error) {
	if in == nil {
		return nil, nil
	}
	if len(*in) > MaxClaims {
		return nil, invalidBody("claims", RuleMaxItems, `"claims" holds at most %d claims a message.`, MaxClaims)
	}
	out := make([]NewClaim, 0, len(*in))
	for i, c := range *in {
		f := "claims[" + strconv.Itoa(i) + "]"
		if err := checkForumValue(reflectValue(&c), f+"."); err != nil {
			return nil, err
		}
		ev, err := evidenceOf(f+".evidence", c.Evidence)
		if err != nil {
			return nil, err
		}
		out = append(out, NewClaim{Statement: *c.Statement, Evidence: ev})
	}
	return out, nil
}

// profileOf checks an envelope's dialectic profile into m: its claims;
// refutes and evidence belong to a refute, which needs both.
func profileOf(e EnvelopeArgs, m *NewForumMessage) *Error {
	claims, err := claimsOf(e.Claims)
	if err != nil {
		return err
	}
	m.Claims = claims
	if m.Kind != "refute" {
		switch {
		case e.Refutes != nil:
			return invalidBody("refutes", RuleRefuteOnly, `"refutes" belongs to a refute.`)
		case e.Evidence != nil:
			return invalidBody("evidence", RuleRefuteOnly, `"evidence" belongs to a refute (a claim carries its own).`)
		}
		return nil
	}
	if e.Refutes == nil || len(*e.Refutes) == 0 {
		return invalidBody("refutes", RuleRequired, `A refute names the claims it refutes in "refutes" (cl_<n>, of any thread).`)
	}
	if len(*e.Refutes) > MaxRefutes {
		return invalidBody("refutes", RuleMaxItems, `"refutes" holds at most %d claims.`, MaxRefutes)
	}
	for _, k := range *e.Refutes {
		n, err := claimRef("refutes", k)
		if err != nil {
			return err
		}
		if !slices.Contains(m.Refutes, n) {
			m.Refutes = append(m.Refutes, n)
		}
	}
	// Claims are locked in one order (ascending), so two refutes naming
	// the same claims in another order cannot deadlock.
	slices.Sort(m.Refutes)
	if m.Evidence, err = evidenceOf("evidence", e.Evidence); err != nil {
		return err
	}
	if len(m.Evidence) == 0 {
		return Errorf(CodeEvidenceRequired, `A refutation carries evidence: "evidence": [{"kind", "ref", "note"?}].`)
	}
	return nil
}

// claimRef is a claim's number from its key.
func claimRef(field string, k Key) (int64, *Error) {
	if n, ok := k.number(ClaimPrefix); ok {
		return n, nil
	}
	return 0, invalidBody(field, RuleKey, "%q is a claim key (cl_<n>) or its number.", field)
}

func errNoClaim(id int64) *Error {
	return Errorf(CodeClaimNotFound, "No claim %s; see get_threads_id_claims.", ClaimKey(id))
}

// ForumClaim is one claim with its attestations and their history.
func (s *Service) ForumClaim(ctx context.Context, c Caller, a ClaimArgs) (Claim, error) {
	if err := reader(c); err != nil {
		return Claim{}, err
	}
	if err := checkForumArgs(&a); err != nil {
		return Claim{}, err
	}
	id, perr := claimRef("id", *a.ID)
	if perr != nil {
		return Claim{}, perr
	}
	cl, err := s.store.ForumClaim(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return Claim{}, errNoClaim(id)
	}
	return cl, err
}

// ThreadClaims lists a thread's claims in order, with their current
// attestations.
func (s *Service) ThreadClaims(ctx context.Context, c Caller, a ThreadListArgs) (Page[Claim], error) {
	return threadList(ctx, s, c, a, s.store.ThreadClaims)
}

// AttestClaim records the caller's verdict on a claim (write; seal: a
// human or verify): the line's earlier attestation is replaced, and kept
// as history.
func (s *Service) AttestClaim(ctx context.Context, c Caller, a AttestArgs) (Claim, error) {
	if err := checkForumArgs(&a); err != nil {
		return Claim{}, err
	}
	id, perr := claimRef("id", *a.ID)
	if perr != nil {
		return Claim{}, perr
	}
	ev, perr := evidenceOf("evidence", a.Evidence)
	if perr != nil {
		return Claim{}, perr
	}
	var ext *string
	if a.From != nil {
		ext = a.From.Extension
	}
	actor, err := s.forumActor(ctx, c, ext, RightWrite)
	if err != nil {
		return Claim{}, err
	}
	seal := a.Seal != nil && *a.Seal
	if seal && !actor.IsHuman() && !actor.Verify {
		return Claim{}, Errorf(CodeVerifyRightMissing, "Sealing needs the verify right (or a human): attest without seal, or ask a verifier.")
	}
	n := NewAttestation{Verdict: *a.Verdict, Evidence: ev, Sealed: seal}
	if a.Note != nil {
		n.Note = *a.Note
	}
	cl, err := s.store.AttestClaim(ctx, actor, id, n, AttestRule(actor, n))
	if errors.Is(err, ErrNotFound) {
		return Claim{}, errNoClaim(id)
	}
	return cl, err
}

// LimitArgs bound a human's short list (the portal's newest claims, the
// pending proposals).
type LimitArgs struct {
	Limit *int `json:"limit" check:"range=1-100,default=100"`
}

// OwnerClaimsResult are an owner's newest claims.
type OwnerClaimsResult struct {
	Claims []Claim
}

// OwnerClaims are the newest claims of a (verified) owner's agents, for
// the portal.
func (s *Service) OwnerClaims(ctx context.Context, c Caller, a LimitArgs) (OwnerClaimsResult, error) {
	if c.Kind != KindOwner {
		return OwnerClaimsResult{}, errHumanOnly
	}
	if err := checkForumArgs(&a); err != nil {
		return OwnerClaimsResult{}, err
	}
	if _, err := s.forumActor(ctx, c, nil, ""); err != nil {
		return OwnerClaimsResult{}, err
	}
	claims, err := s.store.OwnerClaims(ctx, c.Account, *a.Limit)
	return OwnerClaimsResult{Claims: claims}, err
}

// SealArgs are a human's sealed verdict on a claim.
type SealArgs struct {
	ID      *Key    `json:"id" check:"required"`
	Verdict *string `json:"verdict" check:"required"`
}

// SealClaim is a human's sealed verdict (the portal's and the CLI's seal):
// supports or refutes.
func (s *Service) SealClaim(ctx context.Context, c Caller, a SealArgs) (Claim, error) {
	if !c.Human() {
		return Claim{}, errHumanOnly
	}
	if err := checkForumArgs(&a); err != nil {
		return Claim{}, err
	}
	if *a.Verdict != VerdictSupports && *a.Verdict != VerdictRefutes {
		return Claim{}, invalidBody("verdict", RuleEnum, `A seal is "supports" or "refutes".`)
	}
	t := true
	return s.AttestClaim(ctx, c, AttestArgs{ID: a.ID, Verdict: a.Verdict, Seal: &t})
}
