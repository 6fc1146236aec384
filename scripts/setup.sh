#!/usr/bin/env bash
# Installs everything shotbridge needs on a fresh Debian/Ubuntu machine (or checks it on macOS):
# system packages, the Python package with its Rust core in .venv, and the test-only npm packages.
# Idempotent: a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"

apt_packages=(chromium cmake nasm pkg-config build-essential python3-venv ca-certificates xvfb xauth)
if command -v apt-get >/dev/null 2>&1; then
  missing=()
  for p in "${apt_packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    log "apt-get install ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
elif [ "$(uname)" = Darwin ]; then
  command -v cmake >/dev/null && command -v nasm >/dev/null || {
    echo "macOS: install the build tools first: brew install cmake nasm" >&2; exit 1; }
fi

if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null 2>&1 || {
  echo "Rust is needed to build the core: install it from your OS packages or rustup" >&2; exit 1; }

PY=${PYTHON:-python3}
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  echo "Python >= 3.11 is needed (found $("$PY" --version))" >&2; exit 1; }
if [ ! -x .venv/bin/python ]; then
  log "creating .venv"
  "$PY" -m venv .venv
fi
stamp=.venv/.shotbridge-build
if [ ! -f "$stamp" ] || [ -n "$(find pyproject.toml Cargo.toml rust -newer "$stamp" -type f 2>/dev/null | head -1)" ]; then
  log "building shotbridge (Rust core in release mode) into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e '.[dev]'
  touch "$stamp"
fi

if [ -f tests/e2e/package.json ] && command -v npm >/dev/null 2>&1; then
  if [ ! -d tests/e2e/node_modules ] || [ tests/e2e/package.json -nt tests/e2e/node_modules ]; then
    log "npm install (test-only packages)"
    (cd tests/e2e && npm install --no-audit --no-fund --loglevel=error && touch node_modules)
  fi
fi
log "ready: .venv/bin/shotctl"
