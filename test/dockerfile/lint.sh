#!/usr/bin/env bash
# Lints the Dockerfile: hadolint when installed, else dockerfilelint from the npm registry (cached
# outside the repository).
set -euo pipefail
cd "$(dirname "$0")/../.."
if command -v hadolint >/dev/null; then
  exec hadolint Dockerfile
fi
cache=${XDG_CACHE_HOME:-$HOME/.cache}/refresh-agent/dockerfilelint
if [ ! -x "$cache/node_modules/.bin/dockerfilelint" ]; then
  echo "lint: installing dockerfilelint into $cache" >&2
  npm install --silent --no-audit --no-fund --prefix "$cache" dockerfilelint@1.8.0 >&2
fi
"$cache/node_modules/.bin/dockerfilelint" Dockerfile
