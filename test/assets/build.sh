#!/usr/bin/env bash
# Builds a real etcd and kube-apiserver from source through the Go module proxy, once, into a cache
# outside the repository, and prints the directory that holds them (KUBEBUILDER_ASSETS-style).
# Usage: test/assets/build.sh        (prints the assets dir on the last line of stdout)
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.37.2}
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}
CACHE=${REFRESH_AGENT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/refresh-agent}
ASSETS="$CACHE/assets/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"
mkdir -p "$ASSETS"

log() { echo "assets: $*" >&2; }

build_etcd() {
  [ -x "$ASSETS/etcd" ] && return 0
  log "building etcd $ETCD_VERSION (about 2 minutes on 2 cores)..."
  local w; w=$(mktemp -d)
  cat >"$w/main.go" <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  (cd "$w" && go mod init etcdwrap >/dev/null 2>&1 &&
    go mod edit -require "go.etcd.io/etcd/server/v3@$ETCD_VERSION" &&
    go mod tidy >&2 && go build -trimpath -o "$ASSETS/etcd.tmp" . >&2)
  mv "$ASSETS/etcd.tmp" "$ASSETS/etcd"
  rm -rf "$w"
  log "etcd built"
}

build_apiserver() {
  [ -x "$ASSETS/kube-apiserver" ] && return 0
  log "building kube-apiserver $K8S_VERSION (about 9 minutes on 2 cores, ~2.5 GB RAM)..."
  local w; w=$(mktemp -d)
  local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  local staging="v0.${K8S_VERSION#v1.}"
  (cd "$w" && go mod init apiserverwrap >/dev/null 2>&1 &&
    go mod download -json "k8s.io/kubernetes@$K8S_VERSION" >/dev/null &&
    go mod edit -require "k8s.io/kubernetes@$K8S_VERSION")
  local gomod; gomod=$(cd "$w" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  # k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them locally: pin each to the release.
  grep -E '^\s*k8s\.io/[a-z0-9-]+ v0\.0\.0\s*$' "$gomod" | awk '{print $1}' | sort -u | while read -r m; do
    (cd "$w" && go mod edit -replace "$m=$m@$staging")
  done
  cat >"$w/tools.go" <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
GO
  (cd "$w" && go mod tidy >&2 &&
    go build -trimpath -ldflags "-X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" \
      -o "$ASSETS/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver >&2)
  mv "$ASSETS/kube-apiserver.tmp" "$ASSETS/kube-apiserver"
  rm -rf "$w"
  log "kube-apiserver built"
}

# One build at a time per cache: go test runs packages in parallel, and two test binaries that each
# call this script (test/integration, test/kubetest) would otherwise build the same binaries twice at
# once into the same .tmp files.
exec 9>"$ASSETS/.build.lock"
flock 9
build_etcd
build_apiserver
echo "$ASSETS"
