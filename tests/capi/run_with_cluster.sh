#!/usr/bin/env bash
# Runs a command with TRELLIS_DATABASE_URL naming a fresh PostgreSQL that
# `trellis dev` serves (the project's testkit), then stops it and removes it.
# Usage: run_with_cluster.sh TRELLIS_BINARY COMMAND [ARGS...]
set -euo pipefail
trellis=$1
shift
dir=$(mktemp -u /tmp/trellis-cluster-XXXXXX)
out=$(mktemp)
"$trellis" dev --dir "$dir" >"$out" 2>"$out.err" &
pid=$!
cleanup() {
  kill -INT "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$dir" "$out" "$out.err"
}
trap cleanup EXIT
url=""
for _ in $(seq 1 1200); do  # up to 120 s for initdb and start
  url=$(sed -n "s/^export TRELLIS_DATABASE_URL='\(.*\)'$/\1/p" "$out")
  [ -n "$url" ] && break
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "trellis dev exited before serving:" >&2
    cat "$out" "$out.err" >&2
    exit 1
  fi
  sleep 0.1
done
[ -n "$url" ] || { echo "trellis dev did not serve within 120 s" >&2; cat "$out.err" >&2; exit 1; }
TRELLIS_DATABASE_URL="$url" "$@"
