#!/usr/bin/env bash
# Installs openapi-spec-validator (PyPI) for the OpenAPI export test (tests/it/openapi.rs).
# Idempotent: does nothing when the validator is already importable.
set -euo pipefail

PYTHON="${PYTHON:-python3}"
if "$PYTHON" -c 'import openapi_spec_validator' >/dev/null 2>&1; then
  "$PYTHON" -m pip show openapi-spec-validator | sed -n 's/^Version: /openapi-spec-validator /p'
  exit 0
fi
"$PYTHON" -m pip install --quiet --disable-pip-version-check 'openapi-spec-validator==0.9.0'
"$PYTHON" -m pip show openapi-spec-validator | sed -n 's/^Version: /openapi-spec-validator /p'
