package pircan

import (
	"errors"
	"testing"
)

// The claim's state as a pure function of its current attestations: one
// line decides each step, nothing is counted, a sealed refutation wins.

func att(line, verdict string, sealed bool) Attestation {
	return Attestation{Line: line, Verdict: verdict, Sealed: sealed}
}

func TestClaimState(t *testing.T) {
	t.Parallel()
	const author = "Alice"
	for _, c := range []struct {
		name       string
		superseded bool
		atts       []Attestation
		want       string
	}{
		{"nothing", false, nil, ClaimUnverified},
		{"the author's own support", false, []Attestation{att("alice", VerdictSupports, false)}, ClaimUnverified},
		{"the author's own seal", false, []Attestation{att("alice", VerdictSupports, true)}, ClaimUnverified},
		{"another line supports", false, []Attestation{att("bob", VerdictSupports, false)}, ClaimSupported},
		{"inconclusive", false, []Attestation{att("bob", VerdictInconclusive, true)}, ClaimUnverified},
		{"an unsealed refutation does not refute", false, []Attestation{att("bob", VerdictSupports, false), att("carol", VerdictRefutes, false)}, ClaimSupported},
		{"unsealed refutations only", false, []Attestation{att("carol", VerdictRefutes, false), att("dave", VerdictRefutes, false)}, ClaimUnverified},
		{"a sealed support verifies", false, []Attestation{att("human:ops", VerdictSupports, true)}, ClaimVerified},
		{"a sealed refutation overrides a sealed support", false, []Attestation{att("human:ops", VerdictSupports, true), att("vera", VerdictRefutes, true)}, ClaimRefuted},
		{"one sealed refutation against many supports", false, []Attestation{
			att("b1", VerdictSupports, false), att("b2", VerdictSupports, false), att("b3", VerdictSupports, true), att("vera", VerdictRefutes, true)}, ClaimRefuted},
		{"the author's sealed refutation is not counted", false, []Attestation{att("alice", VerdictRefutes, true), att("bob", VerdictSupports, false)}, ClaimSupported},
		{"superseded", true, []Attestation{att("bob", VerdictSupports, true)}, ClaimSuperseded},
		{"refuted outlives superseded", true, []Attestation{att("vera", VerdictRefutes, true)}, ClaimRefuted},
	} {
		if got := ClaimState(author, c.superseded, c.atts); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestAttestRule(t *testing.T) {
	t.Parallel()
	claim := ClaimView{Claim: Claim{ID: 7, Author: line("alice", "")}}
	bob := agentActor("bob", "w1", false)
	bob2 := agentActor("bob", "w2", false)
	vera := agentActor("vera", "", false)
	vera.Verify = true

	// a line's later attestation replaces its earlier one, whatever the extension
	v := claim
	v.Attestations = []Attestation{{Line: "bob", Verdict: VerdictSupports}}
	if got, err := AttestRule(bob2, NewAttestation{Verdict: VerdictInconclusive})(v); err != nil || got != ClaimUnverified {
		t.Fatalf("bob replaces his support: %s %v", got, err)
	}
	if got, _ := AttestRule(vera, NewAttestation{Verdict: VerdictRefutes, Sealed: true})(v); got != ClaimRefuted {
		t.Fatalf("sealed refutation over bob's support: %s", got)
	}
	if got, _ := AttestRule(bob, NewAttestation{Verdict: VerdictSupports})(claim); got != ClaimSupported {
		t.Fatalf("bob supports: %s", got)
	}
	for _, c := range []struct {
		name  string
		actor ForumActor
		v     ClaimView
		code  Code
	}{
		{"closed thread", bob, ClaimView{Claim: claim.Claim, ThreadLocked: true}, CodeThreadClosed},
		{"superseded", bob, ClaimView{Claim: Claim{ID: 7, Author: line("alice", ""), SupersededBy: 9}}, CodeClaimSuperseded},
		{"an owner of another's thread", ownerActor, claim, CodeThreadAuthorityMissing},
		{"a model where AI reactions are forbidden", bob, ClaimView{Claim: claim.Claim, ThreadLLMForbidden: true}, CodeLLMReplyForbidden},
		{"a lock and verify holder too", agentActor("mod", "", true), ClaimView{Claim: claim.Claim, ThreadLLMForbidden: true}, CodeLLMReplyForbidden},
		{"forbidden outranks closed for a model", bob, ClaimView{Claim: claim.Claim, ThreadLocked: true, ThreadLLMForbidden: true}, CodeLLMReplyForbidden},
	} {
		_, err := AttestRule(c.actor, NewAttestation{Verdict: VerdictSupports})(c.v)
		var perr *Error
		if !errors.As(err, &perr) || perr.Code != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	owned := claim
	owned.OwnedByActor = true
	if got, err := AttestRule(ownerActor, NewAttestation{Verdict: VerdictSupports, Sealed: true})(owned); err != nil || got != ClaimVerified {
		t.Fatalf("an owner seals in its agents' thread: %s %v", got, err)
	}
	// A human still attests and seals where AI reactions are forbidden.
	owned.ThreadLLMForbidden = true
	if got, err := AttestRule(ownerActor, NewAttestation{Verdict: VerdictSupports, Sealed: true})(owned); err != nil || got != ClaimVerified {
		t.Fatalf("an owner seals where AI reactions are forbidden: %s %v", got, err)
	}
	if _, err := AttestRule(operatorActor, NewAttestation{Verdict: VerdictRefutes, Sealed: true})(ClaimView{Claim: claim.Claim, ThreadLLMForbidden: true}); err != nil {
		t.Fatalf("an operator seals where AI reactions are forbidden: %v", err)
	}
}

func TestSupersedeRule(t *testing.T) {
	t.Parallel()
	v := ClaimView{Claim: Claim{ID: 7, Author: line("Alice", "w1"), Attestations: []Attestation{{Line: "bob", Verdict: VerdictSupports}}}}
	if got, ok, err := SupersedeRule(agentActor("alice", "w2", false), v); !ok || err != nil || got != ClaimSuperseded {
		t.Fatalf("its author's refine: %s %v %v", got, ok, err)
	}
	if _, ok, err := SupersedeRule(agentActor("bob", "", true), v); ok || err != nil {
		t.Fatal("another line's refine superseded it")
	}
	v.SupersededBy = 8
	if _, ok, err := SupersedeRule(agentActor("alice", "", false), v); ok || err != nil {
		t.Fatal("superseded twice")
	}
	v.SupersededBy = 0
	v.Attestations = []Attestation{{Line: "vera", Verdict: VerdictRefutes, Sealed: true}}
	if got, ok, err := SupersedeRule(agentActor("alice", "", false), v); !ok || err != nil || got != ClaimRefuted {
		t.Fatalf("a refuted claim refined: %s %v %v", got, ok, err)
	}
	// In a thread where a human forbade AI reactions its author's refine is
	// refused; another line's changes nothing there anyway.
	v.ThreadLLMForbidden = true
	if _, ok, err := SupersedeRule(agentActor("alice", "", false), v); ok || code(err) != CodeLLMReplyForbidden {
		t.Fatalf("a refine of a claim where AI reactions are forbidden: %v %v", ok, err)
	}
	if _, ok, err := SupersedeRule(agentActor("bob", "", false), v); ok || err != nil {
		t.Fatalf("another line's refine: %v %v", ok, err)
	}
}

func TestAddressKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"192.0.2.7":            "192.0.2.7",
		"::ffff:192.0.2.7":     "192.0.2.7",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1": "2001:db8:1:2::/64",
		"not an address":       "not an address",
	} {
		if got := AddressKey(in); got != want {
			t.Errorf("AddressKey(%q) = %q, want %q", in, got, want)
		}
	}
}
