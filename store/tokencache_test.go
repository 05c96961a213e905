package store_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// The token cache (store/tokencache.go): every HTTP request checks a token.

// checkToken looks a secret up and says whether the cache answered.
func checkToken(t *testing.T, s *store.Store, secret string) (pircan.Token, bool) {
	t.Helper()
	hits, _ := s.TokenCacheStats()
	sum := sha256.Sum256([]byte(secret))
	tok, err := s.TokenBySecret(context.Background(), sum[:])
	if err != nil {
		t.Fatalf("TokenBySecret: %v", err)
	}
	after, _ := s.TokenCacheStats()
	return tok, after > hits
}

func issue(t *testing.T, s *store.Store, account, secret string) pircan.Token {
	t.Helper()
	sum := sha256.Sum256([]byte(secret))
	tok, err := s.IssueToken(context.Background(), pircan.Actor{}, pircan.NewToken{Account: account, SecretSHA256: sum[:]})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// How fast a revocation takes effect: in the process that revokes, at its
// commit (the very next check is refused); in every other process, when
// the notification arrives, and the check after it is refused; while a
// process is not listening, nothing cached is trusted.
func TestTokenCacheRevocation(t *testing.T) {
	ctx, here, there := twoProcesses(t)
	forgotten, await := forgetting(t)
	here.OnTokenForget(func(id string) { forgotten <- id })
	listen(t, ctx, here)
	await("listening", "*")

	// Another process revokes: refused here once its notification is in.
	remote := issue(t, there, "remote", "pircan_remote-secret")
	checkToken(t, here, "pircan_remote-secret") // the first use: a write, announced
	await("the first use", remote.ID)
	checkToken(t, here, "pircan_remote-secret")
	if tok, hit := checkToken(t, here, "pircan_remote-secret"); !hit || !tok.RevokedAt.IsZero() {
		t.Fatalf("a used token not cached while listening (hit %v, %+v)", hit, tok)
	}
	if _, err := there.RevokeToken(ctx, pircan.Actor{Account: "operator:test"}, remote.ID); err != nil {
		t.Fatal(err)
	}
	await("another process's revocation", remote.ID)
	if tok, hit := checkToken(t, here, "pircan_remote-secret"); hit || tok.RevokedAt.IsZero() {
		t.Fatalf("after the notification: hit %v, revoked at %v", hit, tok.RevokedAt)
	}

	// This process revokes: refused at once, before any notification.
	local := issue(t, here, "local", "pircan_local-secret")
	checkToken(t, here, "pircan_local-secret")
	await("the first use", local.ID)
	checkToken(t, here, "pircan_local-secret")
	if _, hit := checkToken(t, here, "pircan_local-secret"); !hit {
		t.Fatal("not cached")
	}
	here.OnTokenForget(nil) // nothing more is told: the revocation must hold without it
	if _, err := here.RevokeToken(ctx, pircan.Actor{Account: "operator:test"}, local.ID); err != nil {
		t.Fatal(err)
	}
	if tok, _ := checkToken(t, here, "pircan_local-secret"); tok.RevokedAt.IsZero() {
		t.Fatal("this process's own revocation not seen by its next check")
	}
	here.OnTokenForget(func(id string) { forgotten <- id })

	// The listening connection dies: nothing is trusted until it is back.
	live := issue(t, there, "live", "pircan_live-secret")
	checkToken(t, here, "pircan_live-secret")
	await("the first use", live.ID)
	checkToken(t, here, "pircan_live-secret")
	if _, err := there.Pool().Exec(ctx,
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN "pircan_agents"' AND datname = current_database()`); err != nil {
		t.Fatal(err)
	}
	await("the listener lost", "*")
	for range 2 {
		if _, hit := checkToken(t, here, "pircan_live-secret"); hit {
			t.Fatal("served from memory while not listening")
		}
	}
	await("listening again", "*")
	checkToken(t, here, "pircan_live-secret")
	if _, hit := checkToken(t, here, "pircan_live-secret"); !hit {
		t.Fatal("not cached after listening again")
	}
}

// An unknown secret is never kept; the cache holds a bounded number.
func TestTokenCacheBounded(t *testing.T) {
	h := newHS(t)
	h.s.TrustTokenCache()
	sum := sha256.Sum256([]byte("pircan_unknown"))
	for range 3 {
		if _, err := h.s.TokenBySecret(h.ctx, sum[:]); err != pircan.ErrNotFound {
			t.Fatalf("unknown secret: %v", err)
		}
	}
	if n := h.s.TokenCacheLen(); n != 0 {
		t.Fatalf("%d entries after unknown secrets", n)
	}
	h.s.TokenCacheLimit(3)
	for i := range 5 {
		secret := fmt.Sprintf("pircan_bound-%d", i)
		issue(t, h.s, "bound", secret)
		checkToken(t, h.s, secret)
		checkToken(t, h.s, secret)
	}
	if n := h.s.TokenCacheLen(); n != 3 {
		t.Fatalf("cache holds %d tokens, limit 3", n)
	}
}
