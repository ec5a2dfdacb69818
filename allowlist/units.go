package allowlist

import (
	"fmt"
	"strings"
)

// unitAliases maps the short names the ConfigMap may use to the units they mean.
var unitAliases = map[string]string{
	"update-ca-trust": UnitUpdateCA,
}

// NormalizeUnit turns a service name as written in a ConfigMap or policy ("crio", "crio.service",
// "update-ca-trust") into a full unit name, rejecting anything that is not a plain unit name (no
// paths, separators or shell syntax).
func NormalizeUnit(name string) (string, error) {
	n := strings.TrimSpace(name)
	if alias, ok := unitAliases[n]; ok {
		return alias, nil
	}
	if n == "" {
		return "", fmt.Errorf("empty service name")
	}
	if len(n) > 255 {
		return "", fmt.Errorf("service name longer than 255 characters")
	}
	for _, c := range n {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == '@' || c == ':' || c == '\\'
		if !ok {
			return "", fmt.Errorf("service name %q contains %q", name, c)
		}
	}
	if strings.Contains(n, "..") || strings.HasPrefix(n, ".") {
		return "", fmt.Errorf("service name %q is not a unit name", name)
	}
	if !strings.Contains(n, ".") {
		n += ".service"
	}
	if alias, ok := unitAliases[strings.TrimSuffix(n, ".service")]; ok {
		return alias, nil
	}
	if !strings.HasSuffix(n, ".service") {
		// Targets, mounts, sockets…: starting reboot.target or restarting a mount is no reload of a
		// service that reads a file. Only services are ever acted on.
		return "", fmt.Errorf("unit %q is not a service", name)
	}
	if err := ActOn(n); err != nil {
		return "", err
	}
	if real, ok := AliasOf(n); ok {
		return "", fmt.Errorf("unit %s is an alias of %s: name the unit itself", n, real)
	}
	return n, nil
}
