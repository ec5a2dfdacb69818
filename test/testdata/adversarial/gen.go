//go:build ignore

// gen writes the adversarial payloads in this directory: go run gen.go
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"strings"

	"github.com/openshift/refresh-agent/test/fixture"
)

func write(name string, data []byte) {
	if err := os.WriteFile(name, data, 0o644); err != nil {
		panic(err)
	}
}

func base() *fixture.Config {
	return fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).
		File("/etc/containers/registries.conf", []byte("# v1 mirrors"), 0o644).
		File("/var/lib/kubelet/config.json", []byte(`{"auths":{}}`), 0o600).
		SSHKeys("ssh-ed25519 AAAA one")
}

func main() {
	write("current.ign", base().JSON())
	write("traversal.ign", base().File("/etc/containers/../../boot/loader/entries/evil.conf", []byte("options init=/bin/sh"), 0o644).JSON())
	write("traversal-allowlisted-prefix.ign", base().File("/etc/containers/registries.d/../../sudoers.d/evil", []byte("ALL ALL=(ALL) NOPASSWD: ALL"), 0o440).JSON())
	write("setuid.ign", base().File("/etc/containers/registries.d/x.yaml", []byte("x"), 0o4755).JSON())
	write("setgid-sticky.ign", base().File("/etc/containers/registries.d/y.yaml", []byte("y"), 0o3644).JSON())
	write("denied-prefix.ign", base().File("/etc/systemd/system/evil.service", []byte("[Service]\nExecStart=/bin/sh\n"), 0o644).JSON())
	write("not-allowlisted.ign", base().File("/etc/cron.d/evil", []byte("* * * * * root /bin/sh"), 0o644).JSON())
	write("eligible.ign", base().File("/etc/containers/registries.conf", []byte("# v2 mirrors"), 0o644).JSON())
	write("ssh-dir-file.ign", base().File("/etc/ssh/sshd_config.d/10-evil.conf", []byte("PermitRootLogin yes"), 0o600).JSON())

	// Kernel arguments hidden in the MachineConfig only: the Ignition config is identical.
	m := fixture.DefaultMachine()
	m.KernelArguments = append(m.KernelArguments, "init=/bin/sh")
	write("current-mc.json", fixture.MachineConfigJSON(fixture.DefaultMachine(), base().JSON()))
	write("kargs-in-machineconfig.json", fixture.MachineConfigJSON(m, base().JSON()))

	// A gzip bomb: 300 MiB of zeros, beyond the 256 MiB decode limit, in about 300 KiB.
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zero := make([]byte, 1<<20)
	for i := 0; i < 300; i++ {
		_, _ = zw.Write(zero)
	}
	_ = zw.Close()
	write("gzip-bomb.gz", buf.Bytes())

	// Duplicate paths.
	dup := base()
	dup.Storage.Files = append(dup.Storage.Files, dup.Storage.Files[len(dup.Storage.Files)-1])
	write("duplicate-paths.ign", dup.JSON())

	// A path with bytes that are not UTF-8 (raw JSON: encoders would escape them).
	raw := base().JSON()
	raw = bytes.Replace(raw, []byte(`"path":"/etc/containers/registries.conf"`), []byte("\"path\":\"/etc/containers/registries\xff\xfe.conf\""), 1)
	write("non-utf8-path.ign", raw)

	// Deeply nested JSON.
	write("deeply-nested.ign", []byte(`{"ignition":{"version":"3.2.0"},"storage":`+strings.Repeat("[", 20000)+strings.Repeat("]", 20000)+`}`))

	// no-reboot-paths that try to widen the policy.
	rules := func(name string, v any) {
		b, _ := json.MarshalIndent(v, "", " ")
		write(name, b)
	}
	type rule struct {
		Path     string   `json:"path"`
		Action   string   `json:"action"`
		Services []string `json:"services,omitempty"`
	}
	rules("rules-injected-service.json", []rule{{Path: "/etc/containers/registries.conf", Action: "Restart", Services: []string{"crio; reboot"}},
		{Path: "/etc/cron.d/", Action: "Restart", Services: []string{"../../x.service"}}})
	rules("rules-denied-prefix.json", []rule{{Path: "/etc/systemd/", Action: "None"}, {Path: "/etc/ssh/", Action: "None"}})
	rules("rules-unknown-unit.json", []rule{{Path: "/etc/cron.d/", Action: "Restart", Services: []string{"sshd"}}})
}
