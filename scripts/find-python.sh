#!/usr/bin/env sh
# Print the path of a working Python 3.13 interpreter, or explain and fail.
# Tries python3.13 on PATH, then pyenv's versions (the shim fails when 3.13 is not the active version).
for candidate in "${PYTHON313:-}" python3.13 "$HOME"/.pyenv/versions/3.13*/bin/python3.13 /usr/local/bin/python3.13 /usr/bin/python3.13; do
  [ -n "$candidate" ] || continue
  if "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 13))' >/dev/null 2>&1; then
    command -v "$candidate" 2>/dev/null || echo "$candidate"
    exit 0
  fi
done
echo "Python 3.13 is required (the Lambda runtime) but was not found: install it (e.g. 'pyenv install 3.13') or set PYTHON313=/path/to/python3.13" >&2
exit 1
