// Package integration tests refresh-agent against real parts: a systemd user manager (in a private
// mount namespace), and temporary node roots.
package integration

import (
	"os"
	"testing"

	"github.com/openshift/refresh-agent/test/systemdtest"
)

func TestMain(m *testing.M) { os.Exit(systemdtest.Main(m)) }
