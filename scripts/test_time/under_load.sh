#!/bin/sh
# `make test` from fresh clones, one after the other, while two busy processes load the machine
# (the suite must pass under load with nothing flaky).
#
# usage: scripts/test_time/under_load.sh [RUNS=3] [OUT=under-load.txt] [REPO=this checkout]
#
# For each run: `git clone REPO` into a new temporary folder (the committed main, nothing
# untracked), then `make test` there (it installs its own virtualenv and, if missing, chromium).
# Two `python3 -c "while True: pass"` loops run the whole time and are killed by PID at the end.
# Each run appends its wall time, exit status, load averages and pytest's summary lines to OUT.
set -u
runs=${1:-3}
out=${2:-under-load.txt}
repo=${3:-$(cd "$(dirname "$0")/../.." && pwd)}
work=$(mktemp -d "${TMPDIR:-/tmp}/under-load.XXXXXX")

python3 -c "while True: pass" & busy1=$!
python3 -c "while True: pass" & busy2=$!
trap 'kill "$busy1" "$busy2" 2>/dev/null' EXIT INT TERM
echo "busy processes: $busy1 $busy2; clones in $work" | tee -a "$out"

i=1
failed=0
while [ "$i" -le "$runs" ]; do
  clone=$work/clone-$i
  git clone -q "$repo" "$clone"
  start=$(date -u +%H:%M:%S); load0=$(cut -d' ' -f1-3 /proc/loadavg)
  (cd "$clone" && /usr/bin/time -f "%e" -o "$work/time-$i" make test > "$work/log-$i" 2>&1)
  rc=$?
  load1=$(cut -d' ' -f1-3 /proc/loadavg)
  summary=$(grep -E "^[0-9]+ (passed|failed)|^=+ .*(passed|failed|error)" "$work/log-$i" | tr -d '=' | tr '\n' ';')
  printf "run %s\tstart %s\tload %s -> %s\trc %s\twall %s s\t%s\n" \
    "$i" "$start" "$load0" "$load1" "$rc" "$(tail -n 1 "$work/time-$i")" "$summary" | tee -a "$out"
  [ "$rc" -eq 0 ] || failed=$((failed + 1))
  i=$((i + 1))
done
echo "logs: $work/log-*; runs failed: $failed" | tee -a "$out"
[ "$failed" -eq 0 ]
