#!/usr/bin/env bash
# Every check and every test: formatting, lints, Rust unit tests, extension unit tests, the shape
# check (import circles, layering, long hot-path functions), pytest (unit, property and real
# headless-Chromium end-to-end tests).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
step() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

step "rustfmt";      cargo fmt --all --check
step "clippy";       cargo clippy --all-targets --quiet -- -D warnings
step "cargo test";   cargo test --quiet
step "ruff";         ruff check python tests bench scripts && ruff format --check python tests bench scripts
if [ -d tests/extension ]; then step "extension unit tests"; node --test tests/extension/; fi
step "layers, circles, hot-path function length"; python scripts/check_layers.py
step "pytest";       python -m pytest -q -p no:cacheprovider "$@"
