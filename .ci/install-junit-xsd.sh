#!/usr/bin/env bash
# Fetches the JUnit XSD that Jenkins' xunit plugin uses (junit-10.xsd, MIT, shipped in pytest's
# source distribution on PyPI) into target/junit-xsd/, and xmllint to validate against it, for
# the JUnit report test (tests/it/junit_xsd.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
dest=target/junit-xsd
if [ ! -f "$dest/junit-10.xsd" ]; then
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --no-binary :all: --no-deps pytest==8.3.5 -d "$tmp"
  mkdir -p "$dest"
  tar -xzf "$tmp/pytest-8.3.5.tar.gz" -C "$tmp" pytest-8.3.5/testing/example_scripts/junit-10.xsd
  cp "$tmp/pytest-8.3.5/testing/example_scripts/junit-10.xsd" "$dest/junit-10.xsd"
  rm -rf "$tmp"
fi
if ! command -v xmllint >/dev/null 2>&1; then
  apt-get install -y -qq libxml2-utils >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq libxml2-utils; }
fi
echo "junit xsd: $dest/junit-10.xsd; $(xmllint --version 2>&1 | head -n 1)"
