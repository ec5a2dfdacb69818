#!/usr/bin/env bash
# Prints the path of promtool: the one on PATH, else Debian's prometheus package's, unpacked (not
# installed: no service) into a cache outside the repository on first use.
set -euo pipefail
promtool=$(command -v promtool || true)
if [ -z "$promtool" ]; then
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/refresh-agent/promtool
  promtool=$cache/usr/bin/promtool
  if [ ! -x "$promtool" ]; then
    echo "promtool: unpacking Debian's prometheus package into $cache" >&2
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    (cd "$tmp" && { apt-get download prometheus >/dev/null 2>&1 || { apt-get update -qq && apt-get download prometheus >/dev/null; }; })
    mkdir -p "$cache"
    dpkg-deb -x "$tmp"/prometheus_*.deb "$cache"
  fi
fi
echo "$promtool"
