#!/usr/bin/env bash
# Installs everything shotbridge needs on a fresh Debian/Ubuntu machine (or checks it on macOS):
# system packages, the Python package with its Rust core in .venv, and the test-only npm packages.
# Idempotent: a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"

# ---- prerequisites, checked before anything long, so a missing one is the first thing said ----
[ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
PY=${PYTHON:-python3}
apt=false; command -v apt-get >/dev/null 2>&1 && apt=true
apt_missing=() problems=()
# need <command> <Debian package> <how to get it elsewhere>: apt installs it below, else we stop.
need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  if $apt; then apt_missing+=("$2"); else problems+=("$1 is missing (needed to build the Rust core's JPEG library): $3"); fi
}
log "checking build prerequisites: Rust (cargo), cmake, nasm, a C compiler, Python >= 3.11 with venv"
command -v cargo >/dev/null 2>&1 ||
  problems+=("Rust (cargo) is missing: install it with rustup: curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y  (then open a new shell). Or skip building: pipx install shotbridge")
need cmake cmake "brew install cmake (macOS) or https://cmake.org/download/"
if [ "$(uname -m)" = x86_64 ]; then need nasm nasm "brew install nasm (macOS) or https://nasm.us"; fi
command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || command -v clang >/dev/null 2>&1 || {
  if $apt; then apt_missing+=(build-essential); else problems+=("no C compiler (cc): xcode-select --install (macOS) or your OS's gcc/clang package"); fi; }
if ! command -v "$PY" >/dev/null 2>&1; then
  problems+=("$PY not found: install Python >= 3.11 (https://www.python.org/downloads/), or set PYTHON=/path/to/python3.11")
elif ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  problems+=("Python >= 3.11 is needed, $PY is $("$PY" --version 2>&1): install a newer one, or set PYTHON=/path/to/python3.11")
elif ! "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  if $apt; then apt_missing+=(python3-venv); else problems+=("$PY has no venv/ensurepip module: install your OS's python3-venv package"); fi
fi
if [ ${#problems[@]} -gt 0 ]; then
  for p in "${problems[@]}"; do printf 'setup: %s\n' "$p" >&2; done
  exit 1
fi
[ ${#apt_missing[@]} -eq 0 ] || log "missing, installing with apt-get next: ${apt_missing[*]}"

# Debian/Ubuntu: the build tools found missing above, plus the browser and display for tests.
# openssh-server: the remote tests run its sshd with a config of their own, on 127.0.0.1.
apt_packages=(chromium cmake nasm pkg-config build-essential python3-venv ca-certificates xvfb xauth xdotool openssh-server)
# Node runs the extension's unit tests, the layer check's JavaScript parser and Playwright; a
# node already on PATH (nodesource, nvm) is kept.
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || apt_packages+=(nodejs npm)
if $apt; then
  missing=()
  for p in "${apt_packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    log "apt-get install ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi

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
