#!/usr/bin/env bash
# Installs, once, what the differential suite (difftest/) needs: Python's venv module, Node.js and npm
# (Debian packages, only when missing), a venv at target/difftest-venv with the pinned official Python
# SDKs (difftest/requirements.txt), and the pinned openai npm package (difftest/node, `npm ci` from its
# package-lock.json). Nothing is fetched again while the pins are unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  echo "installing system packages: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

venv="${HANDS_DIFFTEST_VENV:-target/difftest-venv}"
pins=$(sha256sum difftest/requirements.txt | cut -c1-16)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.pins" 2>/dev/null)" != "$pins" ] ||
   ! "$venv/bin/python" -c 'import anthropic, openai' 2>/dev/null; then
  echo "installing the official Python SDKs into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r difftest/requirements.txt
  "$venv/bin/pip" check --disable-pip-version-check >/dev/null
fi
# The oracle must be the SDKs the suite was written against: anthropic==2.10.0, openai==3.51.0
# (Python) and openai@7.43.0 (npm, difftest/node/package.json).
"$venv/bin/python" - <<'PY'
import anthropic, openai
got = (anthropic.__version__, openai.__version__)
assert got == ("2.10.0", "3.51.0"), f"the difftest venv holds anthropic/openai {got}, not the pinned oracle"
PY
if [ "$(cat "$venv/.pins" 2>/dev/null)" != "$pins" ]; then
  echo "$pins" > "$venv/.pins"
fi

lock=$(sha256sum difftest/node/package-lock.json | cut -c1-16)
if [ ! -f difftest/node/node_modules/openai/package.json ] ||
   [ "$(cat difftest/node/node_modules/.pins 2>/dev/null)" != "$lock" ]; then
  echo "installing the openai npm package into difftest/node" >&2
  (cd difftest/node && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
  echo "$lock" > difftest/node/node_modules/.pins
fi
