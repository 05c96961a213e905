package store_test

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// Bearer tokens at the store: the hash is the only trace of a secret, a
// first use is recorded once however many requests race to be first, and
// revoked tokens are still found (the core refuses them by Token.Active).

func (h *hs) issueToken(account, label, secret string, expires time.Time) pircan.Token {
	h.t.Helper()
	sum := sha256.Sum256([]byte(secret))
	tok, err := h.s.IssueToken(h.ctx, pircan.Actor{}, pircan.NewToken{Account: account, Label: label, ExpiresAt: expires, SecretSHA256: sum[:]})
	if err != nil {
		h.t.Fatalf("issue token for %s: %v", account, err)
	}
	return tok
}

func hashOf(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

func TestTokenIssuedFoundAndFirstUseAuditedOnce(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	after := h.lastAuditID()
	sum := hashOf("pircan_secret-one")
	tok, err := h.s.IssueToken(h.ctx, pircan.Actor{Account: "operator:tester"}, pircan.NewToken{Account: "Alice", Label: "ci bot", SecretSHA256: sum})
	if err != nil || !pircan.ValidID(tok.ID) || tok.Account != "Alice" || tok.Label != "ci bot" || tok.CreatedAt.IsZero() ||
		!tok.ExpiresAt.IsZero() || !tok.RevokedAt.IsZero() || !tok.UsedAt.IsZero() {
		t.Fatalf("issue: %+v, %v", tok, err)
	}
	rows := h.auditAfter(after)
	if len(rows) != 1 || rows[0].action != "token.issued" || rows[0].subject != tok.ID ||
		!strings.Contains(rows[0].details, `"label": "ci bot"`) {
		t.Fatalf("audit after issue: %+v", rows)
	}
	if actor := h.str("SELECT actor_account FROM audit_log WHERE id = $1", rows[0].id); actor != "operator:tester" {
		t.Fatalf("token.issued actor %q, want the operator", actor)
	}
	// Neither the secret nor its hash is in the audit log.
	if strings.Contains(rows[0].details, "secret-one") || strings.Contains(rows[0].details, hex.EncodeToString(sum)) {
		t.Fatalf("audit row carries the secret or its hash: %s", rows[0].details)
	}

	after = h.lastAuditID()
	var wg sync.WaitGroup
	found := make([]pircan.Token, 8)
	errs := make([]error, 8)
	for i := range found {
		wg.Go(func() { found[i], errs[i] = h.s.TokenBySecret(h.ctx, sum) })
	}
	wg.Wait()
	for i := range found {
		if errs[i] != nil || found[i].ID != tok.ID || found[i].UsedAt.IsZero() {
			t.Fatalf("lookup %d: %+v, %v", i, found[i], errs[i])
		}
		if !found[i].UsedAt.Equal(found[0].UsedAt) {
			t.Fatalf("lookup %d saw used_at %v, lookup 0 %v: set more than once", i, found[i].UsedAt, found[0].UsedAt)
		}
	}
	if got := actions(h.auditAfter(after)); !slices.Equal(got, []string{"token.first_use"}) {
		t.Fatalf("audit after 8 racing first uses: %v, want one token.first_use", got)
	}
	again, err := h.s.TokenBySecret(h.ctx, sum)
	if err != nil || !again.UsedAt.Equal(found[0].UsedAt) {
		t.Fatalf("later lookup: %+v, %v", again, err)
	}
	if got := h.auditAfter(after); len(got) != 1 {
		t.Fatalf("a later use wrote audit rows: %v", actions(got))
	}

	_, err = h.s.TokenBySecret(h.ctx, hashOf("pircan_never-issued"))
	wantErr(t, "unknown secret", err, pircan.ErrNotFound)
}

func TestTokenRevokedOnceStillFound(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	expires := time.Now().Add(90 * 24 * time.Hour).Truncate(time.Microsecond)
	tok := h.issueToken("bob", "", "pircan_bob", expires)
	if !tok.ExpiresAt.Equal(expires) {
		t.Fatalf("expires %v, want %v", tok.ExpiresAt, expires)
	}
	after := h.lastAuditID()
	r, err := h.s.RevokeToken(h.ctx, pircan.Actor{Account: "operator:tester"}, tok.ID)
	if err != nil || r.ID != tok.ID || r.RevokedAt.IsZero() || r.Active(time.Now()) {
		t.Fatalf("revoke: %+v, %v", r, err)
	}
	again, err := h.s.RevokeToken(h.ctx, pircan.Actor{Account: "operator:tester"}, tok.ID)
	if err != nil || !again.RevokedAt.Equal(r.RevokedAt) {
		t.Fatalf("revoke again: %+v, %v; want the first revocation kept", again, err)
	}
	if got := actions(h.auditAfter(after)); !slices.Equal(got, []string{"token.revoked"}) {
		t.Fatalf("audit after two revocations: %v, want one token.revoked", got)
	}
	found, err := h.s.TokenBySecret(h.ctx, hashOf("pircan_bob"))
	if err != nil || found.ID != tok.ID || found.Active(time.Now()) {
		t.Fatalf("revoked token by secret: %+v, %v; want it found, not active", found, err)
	}
	_, err = h.s.RevokeToken(h.ctx, pircan.Actor{Account: "operator:tester"}, noSuchID)
	wantErr(t, "revoke unknown", err, pircan.ErrNotFound)
	_, err = h.s.RevokeToken(h.ctx, pircan.Actor{Account: "operator:tester"}, "not-a-uuid")
	wantErr(t, "revoke malformed id", err, pircan.ErrNotFound)
}

func TestTokensNewestFirstByFoldedAccount(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	first := h.issueToken("Alice", "one", "pircan_a1", time.Time{})
	h.exec("UPDATE tokens SET created_at = created_at - interval '1 minute' WHERE id = $1", first.ID)
	second := h.issueToken("alice", "two", "pircan_a2", time.Time{})
	other := h.issueToken("carol", "", "pircan_c1", time.Time{})
	ids := func(ts []pircan.Token) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return out
	}
	for _, account := range []string{"alice", "ALICE"} {
		got, err := h.s.Tokens(h.ctx, account)
		if err != nil || !slices.Equal(ids(got), []string{second.ID, first.ID}) {
			t.Fatalf("tokens of %s: %v, %v; want [%s %s]", account, ids(got), err, second.ID, first.ID)
		}
	}
	all, err := h.s.Tokens(h.ctx, "")
	if err != nil || !slices.Equal(ids(all), []string{other.ID, second.ID, first.ID}) {
		t.Fatalf("all tokens: %v, %v", ids(all), err)
	}
	if got, err := h.s.Tokens(h.ctx, "nobody"); err != nil || len(got) != 0 {
		t.Fatalf("tokens of nobody: %v, %v", got, err)
	}
}
