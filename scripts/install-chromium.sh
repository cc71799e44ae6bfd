#!/usr/bin/env sh
# Install Debian's chromium for the Dashboard's browser tests (Playwright drives it; it downloads
# no browser of its own). Called by `make test` and `make e2e` when /usr/bin/chromium is missing:
# `apt-get update` once, then `apt-get install -y chromium`, with sudo when not root.
set -u
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] && exit 0
fail() {
  echo "make test needs Debian's package 'chromium' ($CHROMIUM) for the Dashboard's browser tests: $1; install it with 'apt-get install -y chromium' as root" >&2
  exit 1
}
if [ "$(id -u)" = 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO="sudo -n"
else
  fail "not root and no password-less sudo"
fi
command -v apt-get >/dev/null 2>&1 || fail "apt-get not found"
echo "Installing Debian's chromium for the browser tests (apt-get update, apt-get install -y chromium)..."
$SUDO apt-get update -q >/dev/null || fail "apt-get update failed"
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium >/dev/null || fail "apt-get install failed"
[ -x "$CHROMIUM" ] || fail "installed, but $CHROMIUM is still missing"
echo "chromium installed: $("$CHROMIUM" --version 2>/dev/null)"
