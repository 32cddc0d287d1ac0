#!/usr/bin/env bash
# Installs Debian's nginx for the fuzz test behind a stock HTTP server (tests/it/fuzz.rs), which
# starts it itself as a reverse proxy on a free port. Idempotent: does nothing when nginx runs.
set -euo pipefail

PATH="$PATH:/usr/sbin:/usr/local/sbin"
if command -v nginx >/dev/null 2>&1 && nginx -v >/dev/null 2>&1; then
  nginx -v 2>&1
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# nginx-light where the release still has it (the smallest build), else the plain package.
$SUDO apt-get install -y -qq --no-install-recommends nginx-light \
  || $SUDO apt-get install -y -qq --no-install-recommends nginx
nginx -v 2>&1
