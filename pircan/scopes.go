package pircan

import (
	"slices"
	"strings"
)

// Scopes of an agreement (spec §3b).
const (
	ScopeMessage      = "message"
	ScopeResourceRead = "resource:read"
	scopeTaskPrefix   = "task:"
	maxSkill          = 64
)

// ValidScope reports whether s is message, resource:read or task:<skill>
// (a skill is 1-64 of [a-z0-9._-]).
func ValidScope(s string) bool {
	if s == ScopeMessage || s == ScopeResourceRead {
		return true
	}
	skill, ok := strings.CutPrefix(s, scopeTaskPrefix)
	if !ok || skill == "" || len(skill) > maxSkill {
		return false
	}
	return strings.IndexFunc(skill, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
	}) < 0
}

// AgreementScopes is one active agreement as seen by the scope rules.
type AgreementScopes struct {
	Requester string
	Scopes    []string
}

// Granted is the set of scopes that me holds towards the other party under
// these active agreements: message goes both ways; task and resource scopes
// only to the agreement's requester.
func Granted(me string, active []AgreementScopes) map[string]bool {
	out := map[string]bool{}
	for _, a := range active {
		for _, s := range a.Scopes {
			if s == ScopeMessage || a.Requester == me {
				out[s] = true
			}
		}
	}
	return out
}

// Covers reports whether every requested scope is already granted.
func Covers(granted map[string]bool, requested []string) bool {
	for _, s := range requested {
		if !granted[s] {
			return false
		}
	}
	return true
}

// Subset reports whether every scope of sub is in of.
func Subset(sub, of []string) bool {
	for _, s := range sub {
		if !slices.Contains(of, s) {
			return false
		}
	}
	return true
}
