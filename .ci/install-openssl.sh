#!/usr/bin/env bash
# The `openssl` command line makes the private CA of tests/it/cacert.rs.
set -euo pipefail
if ! command -v openssl >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -qq --no-install-recommends openssl >/dev/null 2>&1 \
    || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends openssl; }
fi
openssl version
