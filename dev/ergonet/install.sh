#!/usr/bin/env bash
# install.sh -- make sure the ergo binary start.sh runs exists ($ERGO_BIN,
# else $PIRCAN_TEST_ERGO, else ../shared/ergonet/ergo beside the repository
# root: the project keeps no binary). If it is missing, build it
# offline from an Ergo source tree ($ERGO_SRC, default ../shared/ergo-src beside the root) with the
# vendored dependencies and no build tags (no sqlite/mysql/postgres history
# backends: the test network keeps history in memory).
#
# Getting a source tree (the stored mirror lacks the large
# vendor/modernc.org/sqlite/lib/*.go blobs, which a tag-less build never uses):
#   git --git-dir=<ergo.git> archive --prefix=ergo-src/ v2.19.1 -- . \
#       ':(exclude)vendor/modernc.org/sqlite/lib' | tar -x -C <dir>   # then ERGO_SRC=<dir>/ergo-src
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ERGO_BIN=${ERGO_BIN:-${PIRCAN_TEST_ERGO:-$ROOT/../shared/ergonet/ergo}}
ERGO_SRC=${ERGO_SRC:-$ROOT/../shared/ergo-src}
if [ -x "$ERGO_BIN" ]; then
	echo "install.sh: $ERGO_BIN present ($("$ERGO_BIN" --version 2>/dev/null || echo '?'))"
	exit 0
fi
[ -f "$ERGO_SRC/ergo.go" ] || { echo "install.sh: no ergo binary at $ERGO_BIN and no source at $ERGO_SRC" >&2; exit 1; }
command -v go >/dev/null || { echo "install.sh: go not found" >&2; exit 1; }
command -v openssl >/dev/null || { echo "install.sh: openssl not found" >&2; exit 1; }
ver=$(sed -n 's/^.*SemVer *= *"\(.*\)".*$/\1/p' "$ERGO_SRC/irc/version.go" 2>/dev/null | head -n 1)
( cd "$ERGO_SRC" && GOFLAGS=-mod=vendor CGO_ENABLED=0 go build -ldflags "-X main.version=v${ver:-unknown}" -o "$ERGO_BIN" . )
echo "install.sh: built $ERGO_BIN ($("$ERGO_BIN" --version))"
