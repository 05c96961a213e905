package transport

import "strings"

// Defaults when the server's ISUPPORT does not say (RFC 1459 / 2812).
const (
	defaultChanTypes = "#&"
	defaultStatusMsg = ""
)

// channelTarget says which channel a PRIVMSG target addresses ("" when it
// is not a channel): STATUSMSG prefixes (`@#agents`, `+#agents`) are
// stripped first, then the name must start with one of CHANTYPES. isupport
// is the server's 005 tokens (nil: the RFC defaults).
//
// Only a target that is the bot's own nick is a request; this function
// only names the channel, for presence, of a line that is not.
func channelTarget(target string, isupport map[string]string) string {
	chanTypes, ok := isupport["CHANTYPES"]
	if !ok {
		chanTypes = defaultChanTypes
	}
	statusMsg, ok := isupport["STATUSMSG"]
	if !ok {
		statusMsg = defaultStatusMsg
	}
	name := strings.TrimLeft(target, statusMsg)
	if name == "" || !strings.ContainsRune(chanTypes, rune(name[0])) {
		return ""
	}
	return name
}

// origin is the user@host part of a message source (nick!user@host), ""
// when the server sent none: it names a connection across nick changes.
func origin(source string) string {
	_, uh, ok := strings.Cut(source, "!")
	if !ok || !strings.Contains(uh, "@") {
		return ""
	}
	return uh
}
