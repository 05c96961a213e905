package bot_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/parley"
)

// When a forum thread comes to await an agent on IRC, it hears of it by a
// content-free NOTIFY {"type":"forum","count":N} (N: the threads where it
// is due), and its webhook by a POST of type forum; the body never reaches
// IRC.
func TestParleyNotify(t *testing.T) {
	t.Parallel()
	posts := make(chan []byte, 64) // never fills: a handful of events
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		posts <- body
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(recv.Close)
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0", WebhookAllowHosts: []string{"127.0.0.1"}})
	ctx := t.Context()
	core := bot.Core()
	a := bot.Agents(t, "fn", 1)[0]
	aID := a.Hello(`{"name":"` + a.Nick() + `"}`)
	aliceToken := forumToken(t, bot, a.Account)
	bob := bottest.Unique("fnbob")
	c, err := core.Caller(ctx, pircan.FaceIRC, bob, bob)
	must(t, err)
	_, err = core.Hello(ctx, c, pircan.HelloArgs{})
	must(t, err)
	bobToken := forumToken(t, bot, bob)

	const secret = "Secret design notes never shown on IRC"
	ask := func() string {
		var p parley.Posted
		forumPost(t, bot.HTTPURL+parley.APIPath+"/boards/lobby/threads", aliceToken, `{"kind":"ask","body":"`+secret+`"}`, &p)
		var reply parley.Posted
		forumPost(t, bot.HTTPURL+parley.APIPath+"/threads/"+p.Thread.ID+"/messages", bobToken,
			`{"kind":"propose","body":"`+secret+`","parent":"`+p.Message.ID+`"}`, &reply)
		if reply.Thread.Due == nil || reply.Thread.Due.Identity != "pircan:"+a.Account {
			t.Fatalf("alice is due: %+v", reply.Thread)
		}
		return p.Thread.ID
	}
	ask()
	n := a.NextNotify()
	if n.Str("type") != pircan.NotifyForum || n.Int("count") != 1 || strings.Contains(n.Raw, "Secret") {
		t.Fatalf("NOTIFY: %s", n.Raw)
	}

	aliceIRC, err := core.Caller(ctx, pircan.FaceMCP, a.Account, "")
	must(t, err)
	url := recv.URL + "/hook"
	_, err = core.RegisterWebhook(ctx, aliceIRC, pircan.RegisterWebhookArgs{URL: &url})
	must(t, err)
	ask()
	if n := a.NextNotify(); n.Str("type") != pircan.NotifyForum || n.Int("count") != 2 {
		t.Fatalf("second NOTIFY: %s", n.Raw)
	}
	select {
	case body := <-posts:
		var hook map[string]any
		if json.Unmarshal(body, &hook) != nil || hook["type"] != "forum" || hook["count"] != float64(2) || hook["agent_id"] != aID ||
			strings.Contains(string(body), "Secret") {
			t.Fatalf("webhook: %s", body)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no webhook POST of type forum within 20 s")
	}
}

func forumToken(t *testing.T, bot *bottest.Bot, account string) string {
	t.Helper()
	hour := time.Hour
	tok, err := bot.Core().IssueToken(t.Context(), pircan.OperatorCaller("operator:e2e"), pircan.IssueTokenArgs{Account: &account, ExpiresIn: &hour})
	must(t, err)
	return tok.Secret
}

func forumPost(t *testing.T, url, token, body string, v any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || json.Unmarshal(raw, v) != nil {
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, raw)
	}
}
