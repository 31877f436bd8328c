#!/usr/bin/env bash
# Installs, once, what the tests of deploy/ need beyond the system packages: a venv at
# target/deploy-venv (HANDS_DEPLOY_VENV) with the pinned offline validator of the Kubernetes
# manifests (deploy/kubernetes/requirements.txt). Nothing is fetched again while the pins hold.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${HANDS_DEPLOY_VENV:-target/deploy-venv}"
# Tests run this at once from several processes: one installs, the others wait for it.
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
pins=$(sha256sum deploy/kubernetes/requirements.txt | cut -c1-16)
if [ ! -x "$venv/bin/kubernetes-validate" ] || [ "$(cat "$venv/.pins" 2>/dev/null)" != "$pins" ]; then
  python3 -c 'import ensurepip, venv' 2>/dev/null || {
    echo "python3's venv module is missing: run scripts/install-difftest-deps.sh (it installs python3-venv)" >&2
    exit 1
  }
  echo "installing kubernetes-validate into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r deploy/kubernetes/requirements.txt
  "$venv/bin/pip" check --disable-pip-version-check >/dev/null
  echo "$pins" > "$venv/.pins"
fi
