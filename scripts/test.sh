#!/usr/bin/env bash
# The README's test command: installs what it needs (the package with its test extras, which
# builds the Rust core in release mode through maturin), then runs the engine's cargo tests and
# the Python test suite. CI (.ci/run) calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check ".[test]"
# Debian's chromium for the report's headless-browser test (installed only when missing; the test
# skips, saying why, when it cannot be installed)
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
    >/dev/null 2>&1 || echo "note: could not install chromium; the browser test of the report will be skipped" >&2
fi
cargo test -p cnsim-core --quiet
# run pytest from the tests folder so that the installed package (not ./python) is imported
python3 -m pytest -q -p no:cacheprovider tests
