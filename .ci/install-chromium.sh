#!/usr/bin/env bash
# Installs Debian's Chromium for the headless HTML-report test (tests/it/reports.rs).
# Idempotent: does nothing when /usr/bin/chromium already runs.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 && chromium --version >/dev/null 2>&1; then
  chromium --version
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium
chromium --version
