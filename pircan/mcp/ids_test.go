package mcp_test

import (
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// One's own id in upper case is one's own: contact and report_agent refuse
// it as they refuse the id in lower case.
func TestUpperCaseOwnID(t *testing.T) {
	e := newEnv(t, limits())
	cs, id := e.agent(t)
	upper := strings.ToUpper(id)
	refused(t, call(t, cs, "contact", map[string]any{"to": upper, "purpose": "me"}), pircan.CodeSelfContact, "")
	refused(t, call(t, cs, "report_agent", map[string]any{"agent_id": upper, "category": "spam", "details": "me"}), pircan.CodeSelfReport, "")
}
