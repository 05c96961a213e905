package bot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/pgtest"
	pircanbot "github.com/creatimus/pircan/pircan/bot"
)

// A process warns at start when its Postgres does not vacuum by itself
// (FIND reads agent_capabilities from its index alone), and only then:
// whichever this machine's server does, the warning says the same.
func TestWarnsWhenAutovacuumIsOff(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	conn, err := pgx.Connect(ctx, dsn)
	must(t, err)
	var setting string
	must(t, conn.QueryRow(ctx, "SHOW autovacuum").Scan(&setting))
	must(t, conn.Close(ctx))

	var log syncBuffer
	bot, err := pircanbot.New(ctx, pircanbot.Config{DatabaseURL: dsn, NoIRC: true}, zerolog.New(&log))
	must(t, err)
	bot.Store().Close()
	if warned := strings.Contains(log.String(), "autovacuum is off"); warned != (setting == "off") {
		t.Fatalf("autovacuum %s, warned %v; log:\n%s", setting, warned, log.String())
	}
}
