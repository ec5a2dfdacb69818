package main

import (
	"encoding/json"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/test/fixture"
)

// The MachineConfiguration as `oc get machineconfiguration cluster -o yaml` prints it.
const machineConfiguration = `apiVersion: operator.openshift.io/v1
kind: MachineConfiguration
metadata:
  name: cluster
spec:
  logLevel: Normal
  managementState: Managed
  nodeDisruptionPolicy:
    files:
    - path: /etc/myapp/app.conf
      actions:
      - type: Restart
        restart:
          serviceName: myapp.service
    - path: /etc/myapp/kernel.conf
      actions:
      - type: Reboot
    units:
    - name: myapp.service
      actions:
      - type: Restart
        restart:
          serviceName: myapp.service
status:
  nodeDisruptionPolicyStatus:
    clusterPolicies:
      files:
      - path: /etc/containers/registries.conf
        actions:
        - type: Special
      sshkey:
        actions:
        - type: None
`

func TestDiffWithANodeDisruptionPolicy(t *testing.T) {
	pol := writeFile(t, "ndp.yaml", []byte(machineConfiguration))
	cur := writeFile(t, "cur.ign", fixture.Ignition("3.2.0").JSON())
	dropin := "[Service]\nEnvironment=A=1\n"
	des := fixture.Ignition("3.2.0").File("/etc/myapp/app.conf", []byte("x"), 0o644)
	des.Systemd.Units = []types.Unit{{Name: "myapp.service", Dropins: []types.Dropin{{Name: "10-a.conf", Contents: &dropin}}}}
	code, out, stderr := run(t, "diff", "--policy", pol, "--current", cur, "--desired", writeFile(t, "des.ign", des.JSON()), "--output", "json")
	require.Equal(t, exitOK, code, stderr)
	var got struct {
		Eligible bool
		Actions  []struct{ Unit, Action string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.True(t, got.Eligible)
	assert.Equal(t, []struct{ Unit, Action string }{{"", "DaemonReload"}, {"myapp.service", "Restart"}}, got.Actions)

	code, out, _ = run(t, "diff", "--policy", pol, "--current", cur,
		"--desired", writeFile(t, "reboot.ign", fixture.Ignition("3.2.0").File("/etc/myapp/kernel.conf", []byte("x"), 0o644).JSON()))
	assert.Equal(t, exitRefused, code)
	assert.Contains(t, out, "spec.nodeDisruptionPolicy.files[1] (/etc/myapp/kernel.conf) says Reboot")

	bad := writeFile(t, "bad.yaml", []byte("files:\n- path: /etc/sudoers.d/x\n  actions: [{type: None}]\n"))
	code, _, stderr = run(t, "diff", "--policy", bad, "--current", cur, "--desired", cur)
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, "files[0] (/etc/sudoers.d/x): path is under denied prefix /etc/sudoers.d")
}
