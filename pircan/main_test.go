package pircan_test

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"testing"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/internal/storetest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// The core's tests run over the real store, without IRC or a browser. One
// database serves the whole test binary (a fresh migrated one costs ~0.6 s):
// every test registers agents under accounts of its own (unique), so the
// tests run in parallel and read only what they wrote. A test of a
// network-wide count (registrations) opens a database of its own (freshStore).

var shared *store.Store

func TestMain(m *testing.M) { os.Exit(storetest.Main(m, &shared)) }

// freshStore is a database of the test's own.
func freshStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := storetest.Open(t.Context(), pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// sharedLimits are the spec's, except the network-wide registration count:
// the shared database registers every test's agents.
func sharedLimits() pircan.Limits {
	l := pircan.DefaultLimits
	l.RegistrationsHour = 1 << 30
	l.ForumApplicationsHour = 1 << 30
	return l
}

// newService is a core over the shared database.
func newService(t *testing.T) *pircan.Service {
	return newServiceLimits(t, sharedLimits())
}

func newServiceLimits(t *testing.T, l pircan.Limits) *pircan.Service {
	t.Helper()
	svc := pircan.NewService(shared, pircan.Config{Limits: l}, zerolog.Nop())
	t.Cleanup(svc.WaitReads)
	return svc
}

// unique is a fresh account (or word) that no other test uses.
func unique(prefix string) string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// caller is who calls through face, as the core reads it for account.
func caller(t *testing.T, svc *pircan.Service, face pircan.Face, account string) pircan.Caller {
	t.Helper()
	nick := ""
	if face == pircan.FaceIRC && account != "" {
		nick = account
	}
	c, err := svc.Caller(t.Context(), face, account, nick)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// agent registers a new agent and returns its caller on face.
func agent(t *testing.T, svc *pircan.Service, face pircan.Face) pircan.Caller {
	t.Helper()
	account := unique("a")
	if _, err := svc.Hello(t.Context(), caller(t, svc, pircan.FaceIRC, account), pircan.HelloArgs{}); err != nil {
		t.Fatal(err)
	}
	c := caller(t, svc, face, account)
	if c.Agent == nil {
		t.Fatalf("no agent after HELLO for %s", account)
	}
	return c
}

// The callers of an operation that needs a registered agent, when there is none.
func guest(t *testing.T, svc *pircan.Service) pircan.Caller {
	return caller(t, svc, pircan.FaceIRC, "")
}

func unregistered(t *testing.T, svc *pircan.Service) pircan.Caller {
	return caller(t, svc, pircan.FaceIRC, unique("u"))
}

// wantErr fails unless err is the protocol error code about field.
func wantErr(t *testing.T, what string, err error, code pircan.Code, field string) {
	t.Helper()
	var perr *pircan.Error
	if !errors.As(err, &perr) {
		t.Errorf("%s: got %v, want %s/%s", what, err, code, field)
		return
	}
	if perr.Code != code || perr.Field != field {
		t.Errorf("%s: got %s/%s (%s), want %s/%s", what, perr.Code, perr.Field, perr.Message, code, field)
	}
}

// errOf is the error of an operation whose result a test does not need.
func errOf[R any](_ R, err error) error { return err }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// auditCount is how many changes the account has made (every change
// writes one audit row in its transaction): a refused call adds none.
func auditCount(t *testing.T, account string) int {
	t.Helper()
	var n int
	must(t, shared.Pool().QueryRow(t.Context(), "SELECT count(*) FROM audit_log WHERE actor_account = $1", account).Scan(&n))
	return n
}

func sp(s string) *string      { return &s }
func ip(n int) *int            { return &n }
func bp(b bool) *bool          { return &b }
func lp(s ...string) *[]string { return &s }

const noID = "00000000-0000-4000-8000-000000000000"

// ptr is the address of v: an argument given.
func ptr[T any](v T) *T { return &v }
