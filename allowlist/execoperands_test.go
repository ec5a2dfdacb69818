package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round-5 adversary F3 and F4: every word naming the node's program dirs (or a directory above
// them) given to a program not known to only read is refused, in changed and unchanged lines, so
// no list of writers needs to be complete; a bare cd and cd ~ follow HOME; /usr/tmp is /var/tmp.
// The node's own lines that read those dirs stay accepted.
func TestNodeProgramDirsAreNoOperandOfAWriter(t *testing.T) {
	refused := []struct {
		name  string
		lines []string
		why   string
	}{
		{"sort -o", []string{`ExecStart=/usr/bin/sort -o /usr/local/bin/ok /etc/myapp/app.conf`}, "operand of sort"},
		{"sort --output=", []string{`ExecStart=/usr/bin/sort --output=/usr/local/bin/ok /etc/myapp/app.conf`}, "operand of sort"},
		{"uniq IN OUT", []string{`ExecStart=/usr/bin/uniq /etc/myapp/app.conf /usr/local/bin/ok`}, "operand of uniq"},
		{"find -fprintf", []string{`ExecStart=/usr/bin/find /etc/myapp -fprintf /usr/local/bin/ok %p`}, "operand of find"},
		{"find in the program dir", []string{`ExecStart=/usr/bin/find /usr/local/bin -name ok -delete`}, "operand of find"},
		{"split", []string{`ExecStart=/usr/bin/split -n 1 /etc/myapp/app.conf /usr/local/bin/ok`}, "operand of split"},
		{"csplit -f", []string{`ExecStart=/usr/bin/csplit -f /usr/local/bin/ok /etc/myapp/app.conf 1`}, "operand of csplit"},
		{"shuf -o", []string{`ExecStart=/usr/bin/shuf -o /usr/local/bin/ok /etc/myapp/app.conf`}, "operand of shuf"},
		{"xxd -r", []string{`ExecStart=/usr/bin/xxd -r /etc/myapp/app.conf /usr/local/bin/ok`}, "operand of xxd"},
		{"iconv -o", []string{`ExecStart=/usr/bin/iconv -o /usr/local/sbin/ok /etc/myapp/app.conf`}, "/usr/local/sbin/ok"},
		{"openssl -out", []string{`ExecStart=/usr/bin/openssl enc -d -in /etc/myapp/app.conf -out /usr/local/libexec/ok`}, "/usr/local/libexec/ok"},
		{"gpg -o", []string{`ExecStart=/usr/bin/gpg -o /usr/local/bin/ok --dearmor /etc/myapp/app.conf`}, "operand of gpg"},
		{"alternatives --install", []string{`ExecStart=/usr/sbin/alternatives --install /usr/local/bin/ok ok /etc/myapp/app.conf 100`}, "operand of alternatives"},
		{"sed -i on kubenswrapper", []string{`ExecStart=/usr/bin/sed -i '2i /usr/bin/bash /etc/myapp/app.conf' /usr/local/bin/kubenswrapper`}, "/usr/local/bin/kubenswrapper"},
		{"sed --in-place=.bak", []string{`ExecStart=/usr/bin/sed --in-place=.bak s/a/b/ /usr/local/bin/kubenswrapper`}, "operand of sed"},
		{"chmod the dir", []string{`ExecStart=/usr/bin/chmod 777 /usr/local/bin`}, "operand of chmod"},
		{"chown the dir", []string{`ExecStart=/usr/bin/chown core /usr/local/bin`}, "operand of chown"},
		{"setfacl the dir", []string{`ExecStart=/usr/bin/setfacl -m u:core:rwx /usr/local/bin`}, "operand of setfacl"},
		{"chmod -R above", []string{`ExecStart=/usr/bin/chmod -R o+w /usr/local`}, "/usr/local"},
		{"chown -R /var/usrlocal", []string{`ExecStart=/usr/bin/chown -R core /var/usrlocal`}, "/usr/local"},
		{"through /var/usrlocal", []string{`ExecStart=/usr/bin/sort -o /var/usrlocal/bin/ok /etc/myapp/app.conf`}, "/usr/local/bin/ok"},
		{"through ..", []string{`ExecStart=/usr/bin/sort -o /etc/../usr/local/bin/ok /etc/myapp/app.conf`}, "/usr/local/bin/ok"},
		{"root's home", []string{`ExecStart=/usr/bin/sort -o /root/.bashrc /etc/myapp/app.conf`}, "/root/.bashrc"},
		{"~ is root's home", []string{`ExecStart=/usr/bin/sh -c 'sort -o ~/.bashrc /etc/myapp/app.conf'`}, "/root/.bashrc"},
		{"wrapped writer", []string{`ExecStart=/usr/bin/timeout 5 /usr/bin/sort -o /usr/local/bin/ok /etc/myapp/app.conf`}, "operand of sort"},
		{"wrapped by name", []string{`ExecStart=/usr/bin/nice -n 5 sort -o /usr/local/bin/ok /etc/myapp/app.conf`}, "operand of sort"},
		{"in a shell script", []string{`ExecStart=/usr/bin/bash -c 'uniq /etc/myapp/app.conf /usr/local/bin/ok && chmod 755 /usr/local/bin/ok'`}, "operand of uniq"},
		{"cd then relative", []string{`ExecStart=/usr/bin/bash -c 'cd /usr/local/bin; sort -o ok /etc/myapp/app.conf'`}, "/usr/local/bin/ok"},
		{"pushd then relative", []string{`ExecStart=/usr/bin/bash -c 'pushd /usr/local/bin; uniq /etc/myapp/app.conf ok'`}, "/usr/local/bin/ok"},
		{"HOME in the program dir, cd ~", []string{`ExecStart=/usr/bin/bash -c 'export HOME=/usr/local/bin; cd ~; cp /etc/myapp/app.conf ok'`}, "HOME=/usr/local/bin"},
		{"HOME in the program dir, bare cd", []string{`ExecStartPre=/usr/bin/bash -c 'HOME=/usr/local/bin; cd; cp /etc/myapp/app.conf ok; chmod 755 ok'`, `ExecStart=/usr/local/bin/ok`}, "HOME=/usr/local/bin"},
		{"Environment HOME in the program dir", []string{`Environment=HOME=/usr/local/bin`, `ExecStart=/usr/bin/bash -c 'cd; cp /etc/myapp/app.conf ok'`}, "/usr/local/bin"},
		{"bare cd to /root then write", []string{`ExecStart=/usr/bin/bash -c 'cd; sort -o .bashrc /etc/myapp/app.conf'`}, "/root/.bashrc"},
		{"cd ~ to /root then cp", []string{`ExecStart=/usr/bin/bash -c 'cd ~; cp /etc/myapp/app.conf .bashrc'`}, "/root/.bashrc"},
		{"cd ~/.ssh then cp", []string{`ExecStart=/usr/bin/bash -c 'cd ~/.ssh; cp /etc/myapp/app.conf authorized_keys'`}, "/root/.ssh/authorized_keys"},
		{"perl -pi -e on kubenswrapper", []string{`ExecStart=/usr/bin/perl -pi -e s/a/b/ /usr/local/bin/kubenswrapper`}, "perl"},
		{"~root", []string{`ExecStart=/usr/bin/sort -o ~root/.bashrc /etc/myapp/app.conf`}, "~root/.bashrc"},
		{"cd ~root", []string{`ExecStart=/usr/bin/bash -c 'cd ~root; cp /etc/myapp/app.conf .bashrc'`}, "cannot resolve"},
		{"$HOME is root's", []string{`ExecStart=/usr/bin/sh -c 'sort -o $HOME/.bashrc /etc/myapp/app.conf'`}, "/root/.bashrc"},
		{"env -C into the dir", []string{`ExecStart=/usr/bin/env -C /usr/local/bin sort -o ok /etc/myapp/app.conf`}, "/usr/local/bin"},
		{"xargs into cp -t", []string{`ExecStart=/usr/bin/xargs -a /etc/myapp/list cp -t /usr/local/bin`}, "/usr/local/bin"},
		{"busybox", []string{`ExecStart=/usr/bin/busybox sort -o /usr/local/bin/ok /etc/myapp/app.conf`}, "operand of sort"},
		{"patch", []string{`ExecStart=/usr/bin/patch /usr/local/bin/kubenswrapper /etc/myapp/app.conf`}, "operand of patch"},
		{"WorkingDirectory in the dir", []string{"WorkingDirectory=/usr/local/bin", `ExecStart=/usr/bin/sort -o ./ok /etc/myapp/app.conf`}, "/usr/local/bin/ok"},
		// F4: /usr/tmp is /var/tmp on RHEL/RHCOS
		{"usr/tmp chain", []string{`ExecStartPre=/usr/bin/cp /etc/myapp/app.conf /var/tmp/x`, `ExecStart=/usr/bin/bash /usr/tmp/x`}, "/usr/tmp/x"},
		{"usr/tmp program", []string{`ExecStartPre=/usr/bin/install -m 755 /etc/myapp/app.conf /var/tmp/ok`, `ExecStart=/usr/tmp/ok`}, "/usr/tmp/ok"},
	}
	for _, c := range refused {
		for _, changed := range []bool{true, false} {
			err := strictUnit(t, changed, c.lines...)
			if !changed && (c.name == "usr/tmp chain" || c.name == "usr/tmp program") {
				continue // an unchanged line is the node's own: the strict program rule is for changed lines
			}
			require.Error(t, err, "%s (changed %v)", c.name, changed)
			assert.Contains(t, err.Error(), c.why, "%s (changed %v)", c.name, changed)
		}
	}
	accepted := []struct {
		name  string
		lines []string
	}{
		{"the MCS's kubelet", []string{`ExecStartPre=/usr/sbin/restorecon -ri /var/lib/kubelet/pod-resources /usr/local/bin/kubenswrapper /usr/bin/kubensenter`,
			`ExecStart=/usr/local/bin/kubenswrapper /usr/bin/kubelet --config=/etc/kubernetes/kubelet.conf --bootstrap-kubeconfig=/etc/kubernetes/kubeconfig --kubeconfig=/var/lib/kubelet/kubeconfig --container-runtime-endpoint=/var/run/crio/crio.sock`}},
		{"kubens", []string{`ExecStart=/usr/bin/unshare --mount=/run/kubens/mnt --propagation slave mount --make-rshared /`}},
		{"configure-ovs", []string{`ExecStart=/usr/local/bin/configure-ovs.sh OVNKubernetes`}},
		{"a script of the node run by bash", []string{`ExecStart=/bin/bash /usr/local/bin/configure-ovs.sh OVNKubernetes`}},
		{"a wrapper runs the node's program", []string{`ExecStart=/usr/bin/timeout 5 /usr/local/bin/kubenswrapper /usr/bin/kubelet`}},
		{"nice -n runs it", []string{`ExecStart=/usr/bin/nice -n 5 /usr/local/sbin/dynamic-system-reserved-calc.sh true`}},
		{"readers", []string{`ExecStartPre=/usr/bin/test -x /usr/local/bin/kubenswrapper`, `ExecStartPre=/usr/bin/sha256sum /usr/local/bin/kubenswrapper`,
			`ExecStartPre=/usr/bin/sh -c 'ls -l /usr/local/bin; cat /usr/local/bin/kubenswrapper | grep -q exec; test -f /usr/local/bin/x || true'`, `ExecStart=/usr/bin/sleep infinity`}},
		{"sort into the unit's own file", []string{`ExecStart=/usr/bin/sort -o /var/lib/myapp/sorted /etc/myapp/app.conf`}},
		// (no cat .bashrc: root's home is a secret of the node since round 12)
		{"cd to HOME=/root and list", []string{`ExecStart=/usr/bin/bash -c 'cd; ls -la; cd ~; pwd'`}},
	}
	// The MCO's firstboot unit, unchanged: a container engine is judged by judgeImages (a changed
	// line runs none), and the node's own line runs the node's image.
	require.NoError(t, strictUnit(t, false, `ExecStart=/usr/bin/podman run --rm --privileged --net=host -v /:/rootfs --entrypoint machine-config-daemon quay.io/openshift/mcd firstboot-complete-machineconfig --persist-nics`))
	for _, c := range accepted {
		assert.NoError(t, strictUnit(t, false, c.lines...), "%s (unchanged)", c.name)
		assert.NoError(t, sameUnit(t, c.lines...), "%s (changed, the unit's own programs and writes)", c.name)
	}
}

// The node's own unit run in its home (the user manager reports $HOME as its working directory) is
// not refused for words that only look like relative files there (date +%s%N, CI at 3d1f8cf); a
// changed line in the same directory, and a script's own cd into the node's code, still are.
func TestNodesOwnLineInItsHomeIsNotAWriterOfIt(t *testing.T) {
	assert.NoError(t, strictUnit(t, false, "WorkingDirectory=/root", `ExecReload=/bin/sh -c 'date +%s%N >> /tmp/markers/x.reload'`))
	assert.Error(t, strictUnit(t, true, "WorkingDirectory=/root", `ExecStart=/usr/bin/chmod 777 .bashrc`))
	assert.Error(t, strictUnit(t, false, "WorkingDirectory=/root", `ExecStart=/bin/sh -c 'cd /usr/local/bin && chmod 777 ok'`))
}
