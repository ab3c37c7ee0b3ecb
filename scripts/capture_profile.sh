#!/usr/bin/env bash
# Capture profile by instruction counts: how many instructions a writing
# statement costs over no capture, for Trellis capture and for a bare
# key-only statement trigger, counted by callgrind in a single-user backend
# running a procedure that commits N statements in a loop. Counts do not move
# with whatever else the machine runs, so they separate parts of the trigger
# that timings on a shared 2-core machine cannot (docs/benchmarks.md,
# "Capture typed from the transition tables"). A profile, not a benchmark:
# `bench/` times the same loops side by side.
#
#   scripts/capture_profile.sh [BUILD_DIR]      (default: build; needs valgrind)
#   CAPTURE_PROFILE_N (1000)  statements per measured loop (100-row INSERTs: N/10)
set -euo pipefail

build=${1:-build}
n=${CAPTURE_PROFILE_N:-1000}
trellis="$build/trellis"
bench="$build/bench/trellis_bench"
for b in "$trellis" "$bench"; do
  [ -x "$b" ] || { echo "capture_profile: $b is not built (make build)" >&2; exit 2; }
done
command -v valgrind >/dev/null || { echo "capture_profile: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
pgbin=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$pgbin/postgres" ] || { echo "capture_profile: no PostgreSQL server binaries (set PGBIN)" >&2; exit 2; }

dir=$(mktemp -d /tmp/trellis-capture-profile-XXXXXX)
chmod 755 "$dir"
as_pg() {  # PostgreSQL refuses to run as root
  if [ "$(id -u)" -eq 0 ]; then chown -R postgres "$dir"; runuser -u postgres -- "$@"; else "$@"; fi
}
port=$((20000 + RANDOM % 20000))
url="host=$dir port=$port user=postgres dbname=postgres"
settings=(-c fsync=off -c synchronous_commit=off -c full_page_writes=off)
start() { as_pg "$pgbin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -o "-p $port -k $dir ${settings[*]}" start >/dev/null; }
stop() { as_pg "$pgbin/pg_ctl" -D "$dir/data" -w stop >/dev/null; }
sql() { psql -X -q -At "$url" -v ON_ERROR_STOP=1 "$@"; }
cleanup() { as_pg "$pgbin/pg_ctl" -D "$dir/data" -w stop >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT

as_pg "$pgbin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >/dev/null
start
sql <<'EOF'
CREATE TABLE src (id bigserial PRIMARY KEY, grp int NOT NULL, amount numeric(12,2), note text);
CREATE INDEX ON src (grp);
INSERT INTO src (grp, amount, note) SELECT g % 100, g * 0.5, 'note ' || g FROM generate_series(1, 100000) g;
EOF
"$bench" sql | sql  # the key-only trigger and write_loop, as write_tax runs them
"$trellis" -d "$url" apply "TRANSFORM src_view FROM src SELECT grp AS grp, amount * 2 AS twice, left(note, 8) AS tag" >/dev/null
"$trellis" -d "$url" apply "TRANSFORM src_totals FROM src GROUP BY grp SELECT COUNT(*) AS n, SUM(amount) AS total" >/dev/null
"$trellis" -d "$url" run >"$dir/worker.log" 2>&1 &
worker=$!
for _ in $(seq 1 600); do
  [ "$("$trellis" -d "$url" status --json 2>/dev/null | grep -o '"status": "live"' | wc -l)" -eq 2 ] && break
  sleep 0.2
done
kill "$worker"; wait "$worker" || true

# Which triggers fire: none, the bare key-only one, or Trellis's.
use() {
  local on=$1
  sql -c "ALTER TABLE src DISABLE TRIGGER USER" >/dev/null
  case $on in
    key_trigger) for t in key_ring_ins key_ring_upd key_ring_del; do
        sql -c "ALTER TABLE src ENABLE TRIGGER $t" >/dev/null
      done ;;
    trellis) for t in $(sql -c "SELECT tgname FROM pg_trigger WHERE tgrelid = 'src'::regclass AND tgname LIKE 'trellis\_%'"); do
        sql -c "ALTER TABLE src ENABLE ALWAYS TRIGGER \"$t\"" >/dev/null
      done ;;
  esac
}

# Empties the rings, vacuums the source (so every loop starts from the same
# free space and no earlier loop's dead rows) and stops the server.
fresh() {
  sql -c "TRUNCATE key_ring" >/dev/null
  for s in 0 1 2 3; do sql -c "TRUNCATE trellis.ring_$s" >/dev/null; done
  sql -c "VACUUM src" -c "CHECKPOINT" >/dev/null
  stop
}

# Instructions of a single-user backend running `CALL write_loop(kind, m)`.
instructions() {
  echo "CALL write_loop('$1', $2);" >"$dir/cmd.sql"
  chmod 644 "$dir/cmd.sql"
  as_pg valgrind --tool=callgrind --callgrind-out-file="$dir/callgrind.out" \
    "$pgbin/postgres" --single -D "$dir/data" "${settings[@]}" postgres <"$dir/cmd.sql" >"$dir/cg.log" 2>&1
  grep -o 'Collected : [0-9]*' "$dir/cg.log" | grep -o '[0-9]*$'
}

printf '%-12s %-12s %14s %14s\n' kind config "instr/stmt" "over none"
for kind in update_1 insert_1 insert_100; do
  m=$n
  [ "$kind" = insert_100 ] && m=$((n / 10))
  base=0
  for config in none key_trigger trellis; do
    use "$config"
    fresh
    a=$(instructions "$kind" "$m")
    start
    fresh
    b=$(instructions "$kind" $((2 * m)))
    start
    per=$(((b - a) / m))
    [ "$config" = none ] && base=$per
    printf '%-12s %-12s %14d %14d\n' "$kind" "$config" "$per" $((per - base))
  done
done
