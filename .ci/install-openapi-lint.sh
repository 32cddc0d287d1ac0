#!/usr/bin/env bash
# Installs the OpenAPI linters and client generator the OpenAPI export test runs
# (tests/it/openapi.rs): spectral (oas ruleset), redocly and openapi-typescript, from the npm
# registry into target/openapi-lint/. Idempotent: does nothing when all three are there.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=target/openapi-lint
bin="$dest/node_modules/.bin"
if [ ! -x "$bin/spectral" ] || [ ! -x "$bin/redocly" ] || [ ! -x "$bin/openapi-typescript" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    apt-get install -y -qq nodejs npm >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq nodejs npm; }
  fi
  mkdir -p "$dest"
  npm install --prefix "$dest" --no-audit --no-fund --silent \
    @stoplight/spectral-cli@6.16.3 @redocly/cli@2.77.0 openapi-typescript@7.13.0 typescript@5
fi
echo "openapi lint: spectral $("$bin/spectral" --version), redocly $("$bin/redocly" --version), openapi-typescript $("$bin/openapi-typescript" --version 2>&1 | tail -n 1)"
