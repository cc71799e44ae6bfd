#!/usr/bin/env sh
# Measure the first start of `make run` from a fresh clone with an empty virtualenv.
#
#   sh scripts/first_start.sh [REF] [CACHE_DIR]
#
# Clones REF (default HEAD) of this repository into a temporary directory, runs `make run` there
# on free ports and prints the seconds from the start of `make run` until GET /v1/health answers
# 200 (install + embedded AWS + tables + API). Pass the same CACHE_DIR (the installer's download
# cache: pip's and uv's, both kept there) to compare two refs with the same cache state. Stops the stack and removes the clone.
set -eu
REF="${1:-HEAD}"
CACHE="${2:-${PIP_CACHE_DIR:-}}"
REPO="$(git rev-parse --show-toplevel)"
WORK="$(mktemp -d)"
PID=""
# Stop the whole process tree (make, the local stack, its moto server), deepest first, by pid.
kill_tree() { for child in $(ps -o pid= --ppid "$1"); do kill_tree "$child"; done; kill -TERM "$1" 2>/dev/null || true; }
stop() { [ -z "$PID" ] || kill_tree "$PID"; sleep 2; rm -rf "$WORK"; }
trap stop EXIT
git clone --quiet "$REPO" "$WORK/clone"
git -C "$WORK/clone" checkout --quiet "$REF"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port); MOTO_PORT=$(free_port)
START=$(date +%s.%N)
( cd "$WORK/clone" && exec env ${CACHE:+PIP_CACHE_DIR="$CACHE" UV_CACHE_DIR="$CACHE"} PORT="$PORT" MOTO_PORT="$MOTO_PORT" \
    make run >"$WORK/run.log" 2>&1 ) &
PID=$!
until curl -fsS "http://127.0.0.1:$PORT/v1/health" >/dev/null 2>&1; do
  if ! kill -0 "$PID" 2>/dev/null; then cat "$WORK/run.log" >&2; echo "make run exited" >&2; exit 1; fi
  sleep 0.2
done
END=$(date +%s.%N)
python3 -c "print(f'first start of {\"$REF\"}: {float(\"$END\") - float(\"$START\"):.1f} s to a healthy API')"
