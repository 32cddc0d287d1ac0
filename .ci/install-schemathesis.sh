#!/usr/bin/env bash
# Installs Schemathesis (PyPI), pinned, in its own venv for the test that runs it against
# `mallcheck serve` with the exported OpenAPI document (tests/it/openapi.rs). The venv lives in
# ${MALLCHECK_TOOLS_DIR:-$HOME/.cache/mallcheck}/schemathesis (the test looks there).
# Idempotent: does nothing when the pinned version is already installed.
set -euo pipefail

VERSION=4.32.5
PYTHON="${PYTHON:-python3}"
VENV="${MALLCHECK_TOOLS_DIR:-$HOME/.cache/mallcheck}/schemathesis"

if [ -x "$VENV/bin/schemathesis" ] &&
  "$VENV/bin/python" -m pip show schemathesis 2>/dev/null | grep -qx "Version: $VERSION"; then
  echo "schemathesis $VERSION"
  exit 0
fi
rm -rf "$VENV"
mkdir -p "$(dirname "$VENV")"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "schemathesis==$VERSION"
"$VENV/bin/python" -m pip show schemathesis | sed -n 's/^Version: /schemathesis /p'
