#!/usr/bin/env bash
# The README's test command: installs what it needs (the package with its test extras, which
# builds the Rust core in release mode through maturin), then runs the engine's cargo tests and
# the Python test suite. CI (.ci/run) calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check ".[test]"
cargo test -p cnsim-core --quiet
# run pytest from the tests folder so that the installed package (not ./python) is imported
python3 -m pytest -q -p no:cacheprovider tests
