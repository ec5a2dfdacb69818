package api

import "testing"

func TestConfigMapName(t *testing.T) {
	for _, c := range []struct{ tmpl, pool, want string }{
		{"", "workers", "workers-refresh"},
		{"{pool}-refresh", "a", "a-refresh"},
		{"refresh-{pool}", "gpu", "refresh-gpu"},
		{"fixed", "gpu", "fixed"},
	} {
		if got := ConfigMapName(c.tmpl, c.pool); got != c.want {
			t.Errorf("ConfigMapName(%q, %q) = %q, want %q", c.tmpl, c.pool, got, c.want)
		}
	}
}

func TestHash(t *testing.T) {
	if got := Hash([]byte("abc")); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("Hash = %s", got)
	}
}
