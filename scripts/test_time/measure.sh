#!/bin/sh
# Wall time of `make test`: a baseline checkout against this one, side by side on the same machine.
#
# usage: scripts/test_time/measure.sh BASELINE_DIR [ROUNDS=3] [OUT=test-time.tsv] [LABELS="B S F"]
#
# BASELINE_DIR is a worktree of the baseline commit (git worktree add --detach DIR 12d280e) with
# the same virtualenv (.venv symlinked to this one's). Each round runs, back to back:
#   B  the baseline's `make test`
#   S  this checkout's `make test` restricted to the baseline's tests (same_tests.py: the 895 node
#      ids in baseline-12d280e.txt, matched by name; the count is printed)
#   F  this checkout's whole `make test`
# in alternating order (B S F, then F S B, ...), so drift in the machine's load falls on both
# sides. Each run appends one line to OUT: label, start time, 1-minute load average before and
# after, exit status, wall/user/sys seconds (children included), pytest's summary lines.
# Then `python scripts/test_time/summary.py OUT` prints mean, median and ratio to B.
set -u
here=$(cd "$(dirname "$0")" && pwd)
after=$(cd "$here/../.." && pwd)
baseline=$(cd "$1" && pwd)
rounds=${2:-3}
out=${3:-test-time.tsv}
labels=${4:-B S F}
logs=${TMPDIR:-/tmp}/test-time-logs
mkdir -p "$logs"

# The current tests that are baseline tests.
same=$logs/same-tests.txt
(cd "$after" && .venv/bin/python -m pytest --collect-only -q -p no:cacheprovider tests/unit tests/integration tests/e2e) \
  > "$logs/current-ids.txt" 2>/dev/null
"$after/.venv/bin/python" "$here/same_tests.py" "$here/baseline-12d280e.txt" "$logs/current-ids.txt" > "$same" 2> "$logs/same-tests.err"
head -n 1 "$logs/same-tests.err"

run() {  # run LABEL: one `make test`, one line in $out
  label=$1
  start=$(date -u +%H:%M:%S); load0=$(cut -d' ' -f1 /proc/loadavg)
  (
    case $label in
      B) cd "$baseline" ;;
      S) cd "$after"; export PYTHONPATH="$here" PYTEST_ADDOPTS="-p same_tests" SAME_TESTS="$same" ;;
      F) cd "$after" ;;
    esac
    /usr/bin/time -f "%e %U %S" -o "$logs/$label.time" make -o .venv/.installed test > "$logs/$label.log" 2>&1
  )
  rc=$?
  load1=$(cut -d' ' -f1 /proc/loadavg)
  # shellcheck disable=SC2046
  set -- $(tail -n 1 "$logs/$label.time"); wall=$1; user=$2; sys=$3  # (a failed run adds a line before)
  summary=$(grep -E "^[0-9]+ (passed|failed)|^=+ .*(passed|failed|error)" "$logs/$label.log" | tr -d '=' | tr '\n' ';')
  printf "%s\tstart %s\tload %s -> %s\trc %s\twall %s\tuser %s\tsys %s\t%s\n" \
    "$label" "$start" "$load0" "$load1" "$rc" "$wall" "$user" "$sys" "$summary" | tee -a "$out"
  cp "$logs/$label.log" "$logs/$label-$start.log"
}

i=1
while [ "$i" -le "$rounds" ]; do
  if [ $((i % 2)) -eq 1 ]; then order=$labels; else order=$(echo "$labels" | tr ' ' '\n' | sed '1!G;h;$!d' | tr '\n' ' '); fi
  for label in $order; do run "$label"; done
  i=$((i + 1))
done
