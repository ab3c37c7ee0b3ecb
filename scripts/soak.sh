#!/usr/bin/env bash
# Soak: runs the generative suite (tests/generative) in parallel jobs for a
# while, random seeds, never stopping at a failure; each job is one
# generative_tests process with its own PostgreSQL cluster. Failing episodes
# are shrunk once the time is up (a bounded budget per job), and each one's
# report, shrink and worker logs land in OUT/seed-S/. Prints one summary
# line and exits non-zero when an episode failed or a job died.
#
#   scripts/soak.sh [path/to/generative_tests]
#   SOAK_MINUTES (30)  SOAK_JOBS (2)  SOAK_SHRINK_SECONDS (300, per job; 0: no shrink)
#   SOAK_OUT (/tmp/trellis-soak-YYYYmmdd-HHMMSS)
set -uo pipefail

bin=${1:-build/tests/generative/generative_tests}
minutes=${SOAK_MINUTES:-30}
jobs=${SOAK_JOBS:-2}
shrink_seconds=${SOAK_SHRINK_SECONDS:-300}
out=${SOAK_OUT:-/tmp/trellis-soak-$(date +%Y%m%d-%H%M%S)}

if [ ! -x "$bin" ]; then
  echo "soak: $bin is not built (make build)" >&2
  exit 2
fi
mkdir -p "$out"
shrink=1
[ "$shrink_seconds" -gt 0 ] || shrink=0

pids=()
stop_jobs() {
  # Each job stops its own cluster on SIGTERM before it exits.
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  wait
}
interrupted=0
trap 'interrupted=1; echo "soak: interrupted, stopping the jobs" >&2; stop_jobs' INT TERM

started=$(date +%s)
echo "soak: $jobs job(s) for ${minutes}m (shrink budget ${shrink_seconds}s per job), outputs in $out"
for j in $(seq 1 "$jobs"); do
  TRELLIS_GEN_SECONDS=$((minutes * 60)) TRELLIS_GEN_KEEP_GOING=1 TRELLIS_GEN_OUT_DIR="$out" \
    TRELLIS_GEN_SHRINK=$shrink TRELLIS_GEN_SHRINK_SECONDS="$shrink_seconds" \
    "$bin" >"$out/job-$j.log" 2>&1 &
  pids+=($!)
done

died=()
for j in $(seq 1 "$jobs"); do
  wait "${pids[$((j - 1))]}" 2>/dev/null
  rc=$?
  # After an interrupt the trap has already reaped the jobs.
  [ "$interrupted" -eq 0 ] || continue
  # A job that failed episodes exits 1 after its summary line; one stopped
  # by Ctrl-C or SIGTERM exits 130 or 143; anything else without a summary
  # means the job itself died.
  if [ "$rc" -eq 130 ] || [ "$rc" -eq 143 ]; then
    interrupted=1
  elif ! grep -q '^generative summary:' "$out/job-$j.log"; then
    died+=("job-$j (exit $rc)")
  fi
done
trap - INT TERM

# Episode lines: "seed S[ [shrink path P]]: ...: ok|FAILED (Ns)".
episodes=$(cat "$out"/job-*.log | grep -cE '^seed [0-9]+.*: (ok|FAILED) \(' || true)
failing=$(cat "$out"/job-*.log | grep -E '^seed [0-9]+.*: FAILED \(' | sed -E 's/^seed ([0-9]+).*/\1/' |
  sort -u | tr '\n' ' ')
failures=$(cat "$out"/job-*.log | grep -cE '^seed [0-9]+.*: FAILED \(' || true)
elapsed=$(($(date +%s) - started))
line="soak: $episodes episodes, $failures failures, $((elapsed / 60))m$(printf '%02d' $((elapsed % 60)))s, outputs in $out"
[ "$interrupted" -eq 0 ] || line="$line (interrupted)"
echo "$line"
if [ -n "$failing" ]; then
  echo "soak: failing seeds: $failing(each in $out/seed-S/: report.txt, shrink.txt, worker logs)"
fi
if [ ${#died[@]} -gt 0 ]; then
  echo "soak: jobs that died: ${died[*]} (see $out/job-N.log)"
fi
echo "$line" >"$out/summary.txt"
[ "$failures" -eq 0 ] && [ ${#died[@]} -eq 0 ] && [ "$interrupted" -eq 0 ]
