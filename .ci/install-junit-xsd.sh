#!/usr/bin/env bash
# Installs xmllint for the JUnit report test (tests/it/junit_xsd.rs), which validates every
# JUnit file mallcheck writes against the two strict schemas kept unmodified in
# tests/fixtures/junit/ (pytest's and Jenkins xunit's junit-10.xsd).
set -euo pipefail
if ! command -v xmllint >/dev/null 2>&1; then
  apt-get install -y -qq libxml2-utils >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq libxml2-utils; }
fi
echo "xmllint: $(xmllint --version 2>&1 | head -n 1)"
