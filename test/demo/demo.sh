#!/usr/bin/env bash
# The main job on built-in example payloads: plan an eligible and a refused refresh, then apply the
# eligible one to a temporary node root and show what changed. Touches nothing outside a temp dir.
set -uo pipefail
BIN=${BIN:-bin/refresh-agent}
EX=test/testdata/examples
say() { printf '\n== %s\n' "$*"; }

say "diff: eligible refresh (pull secret, registries.conf, core's SSH keys; payload gzip+base64 as in the ConfigMap)"
$BIN diff --current $EX/current.ign --desired $EX/desired-eligible.ign.gz.b64 --no-reboot-paths $EX/no-reboot-paths.json
echo "exit code $?"

say "diff: refused refresh (FIPS switched on, a file under /etc/ssh)"
$BIN diff --current $EX/current.ign --desired $EX/desired-refused.ign --no-reboot-paths $EX/no-reboot-paths.json
echo "exit code $?"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/etc" "$root/var/home/core"
printf 'root:x:0:0:root:/root:/bin/bash\ncore:x:1000:1000:CoreOS Admin:/var/home/core:/bin/bash\n' >"$root/etc/passwd"
printf 'root:x:0:\ncore:x:1000:\n' >"$root/etc/group"
# The files as Ignition wrote them at first boot (current.ign).
mkdir -p "$root/etc/containers" "$root/var/lib/kubelet"
printf 'unqualified-search-registries = ["registry.access.redhat.com"]\n' >"$root/etc/containers/registries.conf"
printf '{"auths":{"quay.io":{"auth":"b2xkOnNlY3JldA=="}}}' >"$root/var/lib/kubelet/config.json"
chmod 600 "$root/var/lib/kubelet/config.json"

say "apply: the refused payload on a temp node root ($root): nothing is written"
$BIN apply --root "$root" --current $EX/current.ign --desired $EX/desired-refused.ign --systemd none
echo "exit code $?; files under the root: $(find "$root" -type f | wc -l) (unchanged)"

say "apply: the eligible payload (unit actions skipped: --systemd none; make test drives a real systemd)"
$BIN apply --root "$root" --current $EX/current.ign --desired $EX/desired-eligible.ign.gz.b64 \
  --no-reboot-paths $EX/no-reboot-paths.json --systemd none
echo "exit code $?"
say "the node root now holds (mode owner path)"
(cd "$root" && find . -type f -printf '%m %u %p\n' | sort -k3)

say "apply again: the recorded state is current, nothing to do"
$BIN apply --root "$root" --desired $EX/desired-eligible.ign.gz.b64 --systemd none
echo "exit code $?"

say "payloads as the machine-config server serves them (generated: Ignition 3.2.0, the files the server adds, the ConfigMap's base64+gzip)"
mcsdir=$(mktemp -d)
node=$(mktemp -d)
trap 'rm -rf "$root" "$mcsdir" "$node"' EXIT
go run ./test/mcs/gen -out "$mcsdir" -provision "$node" || exit 1
echo "a node root provisioned from base.ign at $node: no agent record yet, only what the server left"

say "apply: the first refresh of that node with the payload it booted from: nothing to do, it becomes the record"
$BIN apply --root "$node" --desired "$mcsdir/base.config" --hash P1 --systemd none --cri-socket none
echo "exit code $?"

say "diff: pull secret, registries.conf mirror, user CA bundle, core's SSH key and the HAProxy image at once"
$BIN diff --current "$mcsdir/base.ign" --desired "$mcsdir/multi.config"
echo "exit code $?"

say "diff: haproxy.cfg (HAProxy never re-reads it: the static pod is restarted through the CRI)"
$BIN diff --current "$mcsdir/base.ign" --desired "$mcsdir/haproxy-cfg.config"
echo "exit code $?"

say "diff: an OS image bump as an upgrade makes it, and a KubeletConfig change: refused whole"
$BIN diff --current "$mcsdir/base.ign" --desired "$mcsdir/osimage.config"
echo "exit code $?"
$BIN diff --current "$mcsdir/base.ign" --desired "$mcsdir/kubeletconfig.config"
echo "exit code $?"

say "apply: the combined change on the node (actions skipped here: --systemd none --cri-socket none)"
$BIN apply --root "$node" --desired "$mcsdir/multi.config" --hash P2 --systemd none --cri-socket none
echo "exit code $?"
ls -l "$node/var/lib/kubelet/config.json" "$node/var/home/core/.ssh/authorized_keys.d/ignition"

