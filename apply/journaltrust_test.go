package apply_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
)

// A journal the agent could not have written (issue 27, item 5): recovery refuses it whole and
// touches nothing, whatever phase it claims; a refresh refuses to start over it.
func TestHostileJournalRefusedTouchingNothing(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	for name, j := range map[string]string{
		"passwd with no original":     `{"version":3,"phase":"prepared","meta":{"hash":"x"},"entries":[{"path":"/etc/passwd","hadOriginal":false}]}`,
		"shadow removed":              `{"version":3,"phase":"rollingback","meta":{"hash":"x"},"entries":[{"path":"/etc/shadow","remove":true,"hadOriginal":false}]}`,
		"denied prefix":               `{"version":3,"phase":"preparing","meta":{"hash":"x"},"entries":[{"path":"/etc/kubernetes/kubelet.conf","hadOriginal":false}]}`,
		"unit file without rule":      `{"version":3,"phase":"prepared","meta":{"hash":"x"},"entries":[{"path":"/etc/systemd/system/sshd.service","hadOriginal":false}]}`,
		"reboot action":               `{"version":3,"phase":"committed","committed":true,"meta":{"hash":"x","actions":[{"unit":"reboot.target","action":"Restart"}]},"entries":[{"path":"/etc/containers/registries.conf","hadOriginal":true}]}`,
		"payload file elsewhere":      `{"version":3,"phase":"prepared","meta":{"hash":"x","payloadFile":"current.json"},"entries":[]}`,
		"created dir no parent":       `{"version":3,"phase":"preparing","meta":{"hash":"x"},"entries":[{"path":"/etc/containers/registries.conf"}],"createdDirs":["/var/lib/kubelet"]}`,
		"unknown version":             `{"version":9,"phase":"preparing","meta":{"hash":"x"},"entries":[]}`,
		"hash with a newline":         `{"version":3,"phase":"preparing","meta":{"hash":"x\ny"},"entries":[]}`,
		"legit path, foreign payload": `{"version":3,"phase":"prepared","meta":{"hash":"x","payloadFile":"payloads/` + sha + `/../../current.json"},"entries":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			n := newNode(t)
			require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "journal.json"), []byte(j), 0o600))
			before := n.treeHash(t)
			rec, err := apply.Recover(context.Background(), n.Host)
			require.Error(t, err)
			assert.True(t, strings.Contains(err.Error(), "touching nothing") || strings.Contains(err.Error(), "left as it is"), err.Error())
			assert.Equal(t, before, n.treeHash(t), "nothing touched, the journal kept")
			assert.Empty(t, n.units.ran, "no unit action run")
			assert.NotEqual(t, api.OutcomeApplied, rec.Outcome)
			_, err = apply.Run(context.Background(), n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2"})
			require.Error(t, err, "nothing starts over a hostile journal")
			assert.Equal(t, before, n.treeHash(t))
		})
	}
}

// Core's keys file is the only keys file recovery trusts, at the home the node's /etc/passwd gives
// core (adversary r12 core/02): a forged journal saying another home's keys "had no original" would
// otherwise have recovery delete them and say "rolled back".
func TestHostileJournalNamingAnotherUsersKeys(t *testing.T) {
	for _, p := range []string{
		"/home/other/.ssh/authorized_keys.d/ignition",
		"/home/nouser/.ssh/authorized_keys.d/ignition",
		"/var/home/x/.ssh/authorized_keys.d/ignition",
		"/var/home/core/sub/.ssh/authorized_keys.d/ignition",
		"/home/core/.ssh/authorized_keys.d/ignition", // core's home is /var/home/core on this node
		"/root/.ssh/authorized_keys.d/ignition",
	} {
		t.Run(p, func(t *testing.T) {
			n := newNode(t)
			victim := filepath.Join(n.dir, p)
			require.NoError(t, os.MkdirAll(filepath.Dir(victim), 0o700))
			require.NoError(t, os.WriteFile(victim, []byte("ssh-rsa VICTIM\n"), 0o600))
			var st syscall.Stat_t
			require.NoError(t, syscall.Stat(victim, &st))
			h := sha256.Sum256([]byte(path.Base(p)))
			side := path.Join(path.Dir(p), ".refresh-agent-"+hex.EncodeToString(h[:12]))
			sum := sha256.Sum256([]byte("ssh-rsa VICTIM\n"))
			j := fmt.Sprintf(`{"version":6,"phase":"prepared","meta":{"hash":"x"},"entries":[{"path":%q,"temp":%q,"backup":%q,"hadOriginal":false,"newDev":%d,"newIno":%d,"newSHA256":%q}]}`,
				p, side+"-tmp", side+"-backup", st.Dev, st.Ino, hex.EncodeToString(sum[:]))
			require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "journal.json"), []byte(j), 0o600))
			before := n.treeHash(t)
			_, err := apply.Recover(context.Background(), n.Host)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "touching nothing")
			assert.Contains(t, err.Error(), "a keys file no refresh of this node writes (core's is /var/home/core/.ssh/authorized_keys.d/ignition)")
			assert.Equal(t, before, n.treeHash(t))
			b, err := os.ReadFile(victim)
			require.NoError(t, err, "the keys file is kept")
			assert.Equal(t, "ssh-rsa VICTIM\n", string(b))
		})
	}
}
