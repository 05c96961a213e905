package store

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// The dialectic profile's store (pircan.ClaimStore): claims a message
// makes, in its transaction; attestations under the claim's row lock, the
// state the core's rule computed written with them.

func evidenceJSON(ev []pircan.Evidence) ([]byte, error) {
	if ev == nil {
		ev = []pircan.Evidence{}
	}
	return json.Marshal(ev)
}

func evidenceOf(b []byte) []pircan.Evidence {
	out := []pircan.Evidence{}
	_ = json.Unmarshal(b, &out)
	return out
}

func toClaim(c db.ForumClaim) pircan.Claim {
	out := pircan.Claim{ID: c.ID, ThreadID: c.ThreadID, MessageID: c.MessageID, Statement: c.Statement,
		Evidence: evidenceOf(c.Evidence), Author: pircan.Line{Account: c.AuthorAccount, Extension: c.AuthorExt},
		State: c.State, CreatedAt: c.CreatedAt, Attestations: []pircan.Attestation{}}
	if c.SupersededBy.Valid {
		out.SupersededBy = c.SupersededBy.Int64
	}
	return out
}

func toAttestation(a db.ForumAttestation) pircan.Attestation {
	out := pircan.Attestation{ID: a.ID, ClaimID: a.ClaimID, Line: a.Line, By: a.ByIdentity, ByExt: a.ByExt,
		Verdict: a.Verdict, Note: a.Note, Evidence: evidenceOf(a.Evidence), Sealed: a.Sealed, Current: a.Current,
		StateAfter: a.StateAfter, At: a.At}
	if a.MessageID.Valid {
		out.Message = a.MessageID.Int64
	}
	return out
}

func attestations(rows []db.ForumAttestation) []pircan.Attestation {
	out := make([]pircan.Attestation, 0, len(rows))
	for _, r := range rows {
		out = append(out, toAttestation(r))
	}
	return out
}

// ForumClaim implements pircan.ClaimStore.
func (s *Store) ForumClaim(ctx context.Context, id int64) (pircan.Claim, error) {
	var out pircan.Claim
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		c, err := q.ForumClaimRow(ctx, id)
		if err != nil {
			return notFound(err)
		}
		out = toClaim(c)
		hist, err := q.AttestationHistory(ctx, db.AttestationHistoryParams{ClaimID: id, Lim: pircan.MaxAttestations})
		out.History = attestations(hist)
		for _, a := range out.History {
			if a.Current {
				out.Attestations = append(out.Attestations, a)
			}
		}
		return err
	})
	return out, err
}

// ThreadClaims implements pircan.ClaimStore: a page of claims, then the
// current attestations of the page in one query.
func (s *Store) ThreadClaims(ctx context.Context, thread int64, limit, offset int) ([]pircan.Claim, int, error) {
	var out []pircan.Claim
	total := 0
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.ThreadClaims(ctx, db.ThreadClaimsParams{ThreadID: thread, Lim: int32(limit), Off: int32(offset)})
		if err != nil {
			return err
		}
		n, err := q.CountThreadClaims(ctx, thread)
		if err != nil {
			return err
		}
		total = int(n)
		out, err = withAttestations(ctx, q, rows)
		return err
	})
	return out, total, err
}

// withAttestations converts claims and reads their current attestations.
func withAttestations(ctx context.Context, q *db.Queries, rows []db.ForumClaim) ([]pircan.Claim, error) {
	out := make([]pircan.Claim, 0, len(rows))
	ids := make([]int64, 0, len(rows))
	at := map[int64]int{}
	for _, r := range rows {
		at[r.ID] = len(out)
		out = append(out, toClaim(r))
		ids = append(ids, r.ID)
	}
	if len(ids) == 0 {
		return out, nil
	}
	atts, err := q.CurrentAttestationsOf(ctx, ids)
	for _, a := range atts {
		i := at[a.ClaimID]
		out[i].Attestations = append(out[i].Attestations, toAttestation(a))
	}
	return out, err
}

// OwnerClaims are the newest claims of an owner's agents' accounts.
func (s *Store) OwnerClaims(ctx context.Context, owner string, limit int) ([]pircan.Claim, error) {
	var out []pircan.Claim
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.OwnerClaims(ctx, db.OwnerClaimsParams{OwnerFolded: foldAccount(owner), Lim: int32(limit)})
		if err != nil {
			return err
		}
		out, err = withAttestations(ctx, q, rows)
		return err
	})
	return out, err
}

// lockClaim is a claim locked with its current attestations, as the
// core's rules see it.
func lockClaim(ctx context.Context, q *db.Queries, id int64, actor pircan.ForumActor) (pircan.ClaimView, error) {
	r, err := q.LockForumClaim(ctx, id)
	if err != nil {
		return pircan.ClaimView{}, notFound(err)
	}
	v := pircan.ClaimView{Claim: toClaim(r.ForumClaim), ThreadLocked: r.ThreadLocked, ThreadLLMForbidden: r.ThreadLlmReplyForbidden}
	cur, err := q.CurrentAttestations(ctx, id)
	if err != nil {
		return v, err
	}
	v.Attestations = attestations(cur)
	if actor.Owner != "" {
		if v.OwnedByActor, err = q.OwnsForumCreator(ctx, db.OwnsForumCreatorParams{
			CreatorFolded: r.CreatorFolded, OwnerFolded: foldAccount(actor.Owner)}); err != nil {
			return v, err
		}
	}
	return v, nil
}

// attest runs rule on a locked claim and stores the line's attestation
// (its earlier one kept as history), the claim's state and an audit row.
func attest(ctx context.Context, q *db.Queries, actor pircan.ForumActor, id int64, n pircan.NewAttestation,
	rule func(pircan.ClaimView) (string, error)) (pircan.Claim, error) {
	v, err := lockClaim(ctx, q, id, actor)
	if err != nil {
		return pircan.Claim{}, err
	}
	state, err := rule(v)
	if err != nil {
		return pircan.Claim{}, err
	}
	line := pircan.AttestLine(actor)
	if err := q.ReplaceAttestation(ctx, db.ReplaceAttestationParams{ClaimID: id, Line: line}); err != nil {
		return pircan.Claim{}, err
	}
	ev, err := evidenceJSON(n.Evidence)
	if err != nil {
		return pircan.Claim{}, err
	}
	p := db.InsertAttestationParams{ClaimID: id, Line: line, ByIdentity: actor.Identity, ByExt: actor.Extension,
		Verdict: n.Verdict, Note: n.Note, Evidence: ev, Sealed: n.Sealed, StateAfter: state}
	if n.Message != 0 {
		p.MessageID = pgtype.Int8{Int64: n.Message, Valid: true}
	}
	if _, err := q.InsertAttestation(ctx, p); err != nil {
		return pircan.Claim{}, err
	}
	if err := q.SetClaimState(ctx, db.SetClaimStateParams{ID: id, State: state, SupersededBy: optInt8(v.SupersededBy)}); err != nil {
		return pircan.Claim{}, err
	}
	cur, err := q.CurrentAttestations(ctx, id)
	if err != nil {
		return pircan.Claim{}, err
	}
	out := v.Claim
	out.State, out.Attestations = state, attestations(cur)
	details := map[string]any{"verdict": n.Verdict, "sealed": n.Sealed, "state": state, "note_size": len(n.Note),
		"evidence": len(n.Evidence), "thread": pircan.ThreadKey(v.ThreadID)}
	if n.Message != 0 {
		details["message"] = pircan.MessageKey(n.Message)
	}
	return out, audit(ctx, q, actor.AuditActor(), "forum.claim_attested", pircan.ClaimKey(id), humanDetails(actor, details))
}

func optInt8(n int64) pgtype.Int8 {
	return pgtype.Int8{Int64: n, Valid: n != 0}
}

// AttestClaim implements pircan.ClaimStore.
func (s *Store) AttestClaim(ctx context.Context, actor pircan.ForumActor, id int64, n pircan.NewAttestation,
	rule func(pircan.ClaimView) (string, error)) (pircan.Claim, error) {
	var out pircan.Claim
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		var err error
		out, err = attest(ctx, q, actor, id, n, rule)
		return err
	})
	return out, err
}

// messagesProfile adds to a page of messages the claims each made and,
// for a refute, the claims it refuted and its evidence: two reads by the
// page's ids.
func messagesProfile(ctx context.Context, q *db.Queries, msgs []pircan.ForumMessage) error {
	if len(msgs) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(msgs))
	at := map[int64]int{}
	for i, m := range msgs {
		ids = append(ids, m.ID)
		at[m.ID] = i
	}
	claims, err := q.MessagesClaims(ctx, ids)
	if err != nil {
		return err
	}
	for _, c := range claims {
		m := &msgs[at[c.MessageID]]
		m.Claims = append(m.Claims, c.ID)
	}
	refs, err := q.MessagesRefutations(ctx, ids)
	if err != nil {
		return err
	}
	for _, r := range refs {
		m := &msgs[at[r.MessageID.Int64]]
		m.Refutes = append(m.Refutes, r.ClaimID)
		if m.Evidence == nil {
			m.Evidence = evidenceOf(r.Evidence)
		}
	}
	return nil
}

// postClaims stores what a message does in the profile, in its
// transaction: its claims, the refutations of a refute (each a refutes
// attestation of the line), and the claims its author's refine supersedes.
func postClaims(ctx context.Context, q *db.Queries, actor pircan.ForumActor, m pircan.NewForumMessage, thread, msg int64) ([]pircan.Claim, []pircan.Claim, error) {
	var made, refuted []pircan.Claim
	for _, c := range m.Claims {
		ev, err := evidenceJSON(c.Evidence)
		if err != nil {
			return nil, nil, err
		}
		r, err := q.InsertForumClaim(ctx, db.InsertForumClaimParams{ThreadID: thread, MessageID: msg, Statement: c.Statement,
			Evidence: ev, AuthorAccount: actor.Account, AuthorFolded: foldAccount(actor.Account), AuthorExt: actor.Extension})
		if err != nil {
			return nil, nil, err
		}
		made = append(made, toClaim(r))
	}
	for _, id := range m.Refutes {
		n := pircan.NewAttestation{Verdict: pircan.VerdictRefutes, Evidence: m.Evidence, Message: msg}
		c, err := attest(ctx, q, actor, id, n, m.Refute)
		if err != nil {
			return nil, nil, notFoundAs(err, pircan.ErrClaimNotFound)
		}
		refuted = append(refuted, c)
	}
	if m.Kind != "refine" || len(made) == 0 {
		return made, refuted, nil
	}
	var related []int64
	for _, k := range m.RelatesTo {
		if strings.HasPrefix(k, pircan.ClaimPrefix) {
			related = appendOnce(related, keyNumber(k, pircan.ClaimPrefix))
		}
	}
	slices.Sort(related) // one lock order for every transaction
	for _, id := range related {
		v, err := lockClaim(ctx, q, id, actor)
		if err != nil {
			return nil, nil, err
		}
		state, ok, err := pircan.SupersedeRule(actor, v)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		if err := q.SetClaimState(ctx, db.SetClaimStateParams{ID: v.ID, State: state, SupersededBy: optInt8(made[0].ID)}); err != nil {
			return nil, nil, err
		}
		if err := audit(ctx, q, actor.AuditActor(), "forum.claim_superseded", pircan.ClaimKey(v.ID), humanDetails(actor,
			map[string]any{"by": pircan.ClaimKey(made[0].ID), "message": pircan.MessageKey(msg), "state": state})); err != nil {
			return nil, nil, err
		}
	}
	return made, refuted, nil
}
