#!/usr/bin/env bash
# The README's test command: installs what it needs (the package with its test extras, which
# builds the Rust core in release mode through maturin), then runs the engine's cargo tests and
# the Python test suite. CI (.ci/run) calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check ".[test]"
# Debian's chromium for the report's headless-browser test (installed only when missing, and said
# so; without root or apt-get the browser tests are skipped and the skip reason is printed)
if ! command -v chromium >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "scripts/test.sh: installing Debian's chromium with apt-get (for the report's headless-browser test)" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
      >/dev/null 2>&1 || echo "scripts/test.sh: could not install chromium; the browser tests will be skipped" >&2
  else
    echo "scripts/test.sh: chromium is missing and cannot be installed here (needs root and apt-get); the browser tests will be skipped" >&2
  fi
fi
cargo test -p cnsim-core --quiet
# lints as errors (issue 11); clippy is a rustup component a minimal toolchain may lack
if cargo clippy --version >/dev/null 2>&1; then
  cargo clippy --quiet -p cnsim-core -p cnsim-py --all-targets -- -D warnings
else
  echo "scripts/test.sh: cargo clippy is not installed (rustup component add clippy); skipping the Rust lints" >&2
fi
# run pytest from the tests folder so that the installed package (not ./python) is imported
# -rs: the reason of every skipped test is printed in the summary; -n auto: one pytest worker per
# core (pytest-xdist), tests handed out as workers free up (worksteal: a few take a minute)
python3 -m pytest -q -rs -p no:cacheprovider -n auto --dist worksteal tests
