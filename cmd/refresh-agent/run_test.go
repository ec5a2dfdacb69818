package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRunFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--source", "api"}, "--namespace"},
		{[]string{"--source", "api", "--namespace", "ns", "--configmap-template", "fixed"}, "{pool}"},
		{[]string{"--source", "api", "--namespace", "ns", "--max-attempts", "0"}, "--max-attempts"},
		{[]string{"--source", "api", "--namespace", "ns", "--drift", "fix"}, "--drift"},
		{[]string{"--source", "nfs"}, "--source"},
		{[]string{"--source", "api", "--namespace", "ns", "--max-concurrent", "0%"}, "--max-concurrent"},
		{[]string{"--source", "api", "--namespace", "ns", "--max-concurrent", "many"}, "--max-concurrent"},
		{[]string{"--source", "volume", "--watch-dir", "/x", "--max-concurrent", "2"}, "--namespace"},
		{[]string{"--source", "api", "--namespace", "ns", "--slot-ttl", "1s"}, "--slot-ttl"},
	} {
		code, _, stderr := run(t, append([]string{"run", "--node-name", "n", "--root", t.TempDir()}, c.args...)...)
		assert.Equal(t, exitInvalid, code, c.args)
		assert.Contains(t, stderr, c.want, c.args)
	}
}
