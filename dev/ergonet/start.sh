#!/usr/bin/env bash
# start.sh <statedir> -- start a loopback IRC test network made of one Ergo
# server (NickServ, SASL and account-tag are built in), with the interface of
# ../ircnet/start.sh (InspIRCd + Anope):
#
# Everything it writes goes into <statedir> (config, TLS cert, logs, PID
# files, Ergo's datastore). On success it prints KEY=VALUE lines on stdout
# (the same lines are saved in <statedir>/ircnet.env) and exits 0 once
# NickServ answers a real client. Progress/errors go to stderr.
#
# Environment (all optional):
#   IRC_PLAIN_PORT  plaintext client port      (default 6667; 0 = pick a free one)
#   IRC_TLS_PORT    TLS client port            (default 6697; 0 = pick a free one)
#   IRC_LINK_PORT   accepted for compatibility; Ergo links no services, nothing
#                   listens on it (printed back as given, 0 stays 0)
#   IRC_SERVER_NAME (irc.test), IRC_NETWORK (TestNet)
#   IRC_SERVICES_NAME (services.irc.test): printed back only; Ergo's services
#                   (NickServ...) are built in and are not clients on any server
#   IRC_OPER_NAME/IRC_OPER_PASS (admin/operpass),
#   IRC_BOT_OPER_NAME/IRC_BOT_OPER_PASS (servicebot/botpass)
#   IRC_START_TIMEOUT  seconds to wait for readiness (default 30)
#   IRC_WATCH_PID      if set, the network is stopped when that PID exits
#   ERGO_BIN           the ergo binary (default: $PIRCAN_TEST_ERGO, else
#                   ../shared/ergonet/ergo beside the repository root)
#   ERGO_TEMPLATE      the config template (default testdata/ergonet/ircd.yaml.in);
#                   the tests render dev/ergo/ircd.yaml into one
#   ERGO_LOG_TYPES ("* -userinput -useroutput"), ERGO_LOG_LEVEL (info): Ergo's
#                   log (logs/ergo.out); "*" + debug logs every client line
#   ERGO__SECTION__KEY=value  any Ergo config key (Ergo's environment overrides),
#                   e.g. ERGO__FAKELAG__ENABLED=true
#   IRC_LINK_PASS, IRC_COPY_BINARIES: accepted and ignored
set -euo pipefail
umask 077

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ERGO_TEMPLATE=${ERGO_TEMPLATE:-$ROOT/testdata/ergonet/ircd.yaml.in}
. "$HERE/../lib/net.sh"

[ $# -eq 1 ] || die "usage: $0 <statedir>"
net_state "$1"

ERGO_BIN=${ERGO_BIN:-${PIRCAN_TEST_ERGO:-$ROOT/../shared/ergonet/ergo}}
[ -x "$ERGO_BIN" ] || die "$ERGO_BIN not found (run install.sh, or set ERGO_BIN / PIRCAN_TEST_ERGO)"
[ -r "$ERGO_TEMPLATE" ] || die "$ERGO_TEMPLATE not found"
ERGO_BIN=$(cd "$(dirname "$ERGO_BIN")" && pwd -P)/$(basename "$ERGO_BIN")
command -v openssl >/dev/null || die "openssl not found"

net_settings 0
ERGO_LOG_TYPES=${ERGO_LOG_TYPES:-* -userinput -useroutput}
ERGO_LOG_LEVEL=${ERGO_LOG_LEVEL:-info}

case "$ERGO_LOG_TYPES" in *[!A-Za-z0-9*\ -]*) die "ERGO_LOG_TYPES: letters, *, - and spaces only" ;; esac
case "$ERGO_LOG_LEVEL" in debug|info|warn|error) ;; *) die "ERGO_LOG_LEVEL: debug, info, warn or error" ;; esac

net_refuse_running ergo

mkdir -p "$STATE/tls" "$STATE/logs" "$STATE/data"
net_cert
printf 'PIRCAN loopback test network (Ergo). Nothing to see here.\n' >"$STATE/motd.txt"

# Oper passwords: Ergo wants bcrypt hashes (ergo genpasswd reads stdin).
genpasswd() { printf '%s\n' "$1" | "$ERGO_BIN" genpasswd --quiet 2>/dev/null | tail -n 1; }
OPER_HASH=$(genpasswd "$IRC_OPER_PASS")
BOT_OPER_HASH=$(genpasswd "$IRC_BOT_OPER_PASS")
case "$OPER_HASH$BOT_OPER_HASH" in *[!A-Za-z0-9./\$]*|'') die "ergo genpasswd failed" ;; esac

render() { # template output
	net_render "$1" "$2" \
		"s|@OPER_HASH@|$OPER_HASH|g" \
		"s|@BOT_OPER_HASH@|$BOT_OPER_HASH|g" \
		"s|@LOG_TYPES@|$ERGO_LOG_TYPES|g" \
		"s|@LOG_LEVEL@|$ERGO_LOG_LEVEL|g"
}

ulimit -c 0 || true

# --- Ergo --------------------------------------------------------------------
ERGO_BIND="couldn't listen on\|address already in use"
start_ergo() { # -> 0 ok, 2 bind failure, 1 other failure
	render "$ERGO_TEMPLATE" "$STATE/ircd.yaml"
	: >"$STATE/logs/ergo.out"
	# `ergo run` stays in the foreground, so $! is the daemon's PID.
	( cd "$STATE" && exec "$ERGO_BIN" run --conf "$STATE/ircd.yaml" ) \
		</dev/null >>"$STATE/logs/ergo.out" 2>&1 &
	echo $! >"$STATE/ergo.pid"
	disown $! 2>/dev/null || true
	net_await ergo "$ERGO_BIND" 'Server running'
}
net_listen ergo Ergo start_ergo "$ERGO_BIND" IRC_PLAIN_PORT IRC_TLS_PORT

fail() { # message; the EXIT trap stops the processes
	log "$*"
	echo "---- $STATE/logs/ergo.out (tail)" >&2; tail -n 25 "$STATE/logs/ergo.out" >&2 || true
	exit 1
}
deadline=$(( $(date +%s) + IRC_START_TIMEOUT ))

net_probe
net_probed
grep -qx 'sasl=.*PLAIN.*' "$STATE/caps.txt" || grep -qx 'sasl' "$STATE/caps.txt" || \
	fail "sasl capability not offered: $(tr '\n' ' ' <"$STATE/caps.txt")"
grep -qx 'account-tag' "$STATE/caps.txt" || fail "account-tag capability not offered: $(tr '\n' ' ' <"$STATE/caps.txt")"
log "NickServ answering, SASL offered, TLS verified after $(elapsed_ms) ms"

net_watchdog ergo
net_done "IRC_SERVER_SOFTWARE=ergo" "ERGO_PID=$(cat "$STATE/ergo.pid")"
