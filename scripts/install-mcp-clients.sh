#!/usr/bin/env bash
# Installs the real MCP clients the `hands mcp` tests run, once: the official Python client (PyPI
# `mcp`, pinned in requirements.txt) into a venv, and the official MCP Inspector CLI (npm
# `@modelcontextprotocol/inspector`, pinned by package-lock.json). Nothing runs when both are there.
set -euo pipefail
dir="$(cd "$(dirname "$0")/../crates/hands/tests/mcp" && pwd)"

stamp="$dir/.venv/installed-requirements.txt"
if ! cmp -s "$dir/requirements.txt" "$stamp" 2>/dev/null; then
  echo "installing the Python MCP client into $dir/.venv" >&2
  python3 -m venv "$dir/.venv"
  "$dir/.venv/bin/pip" install -q --disable-pip-version-check -r "$dir/requirements.txt"
  cp "$dir/requirements.txt" "$stamp"
fi

stamp="$dir/node_modules/installed-package-lock.json"
if ! cmp -s "$dir/package-lock.json" "$stamp" 2>/dev/null; then
  echo "installing the MCP Inspector CLI into $dir/node_modules" >&2
  # The inspector's postinstall only installs its web client from a source checkout.
  (cd "$dir" && INSPECTOR_SKIP_CLIENT_INSTALL=1 npm ci --no-audit --no-fund --loglevel=error)
  cp "$dir/package-lock.json" "$stamp"
fi
