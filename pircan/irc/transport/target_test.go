package transport

import "testing"

func TestChannelTarget(t *testing.T) {
	insp := map[string]string{"CHANTYPES": "#", "STATUSMSG": "!@%+"}
	for _, c := range []struct {
		target string
		is     map[string]string
		want   string
	}{
		{"#agents", insp, "#agents"},
		{"@#agents", insp, "#agents"},
		{"+#agents", insp, "#agents"},
		{"%@#agents", insp, "#agents"},
		{"&local", insp, ""}, // not a CHANTYPE on this server
		{"PIRCAN", insp, ""},
		{"@PIRCAN", insp, ""},
		{"", insp, ""},
		{"&local", nil, "&local"}, // RFC defaults
		{"#agents", nil, "#agents"},
		{"@#agents", nil, ""}, // no STATUSMSG advertised: not a channel (and not our nick either)
	} {
		if got := channelTarget(c.target, c.is); got != c.want {
			t.Errorf("channelTarget(%q, %v) = %q, want %q", c.target, c.is, got, c.want)
		}
	}
}
