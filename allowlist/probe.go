package allowlist

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Probe is a node policy's HTTP check of a rule: after the rule's actions, GET HTTP must answer
// Expect (200 when zero) for the whole verification window.
type Probe struct {
	HTTP   string `json:"http"`
	Expect int    `json:"expect,omitempty"`
}

// check validates a rule's probe: loopback URLs only (a probe asks the node itself, never another
// host), a status code, and actions to follow (a probe of a rule that runs nothing proves nothing).
func (p *Probe) check(r Rule) error {
	if p == nil {
		return nil
	}
	if r.Action == ActionNone {
		return errors.New("probe: action None runs nothing to verify")
	}
	if p.Expect == 0 {
		p.Expect = 200
	}
	if p.Expect < 100 || p.Expect > 599 {
		return fmt.Errorf("probe: expect %d is not an HTTP status code", p.Expect)
	}
	return LoopbackURL(p.HTTP)
}

// LoopbackURL checks that u is an http or https URL on a loopback address (127.0.0.0/8, ::1 or
// localhost), with no user info.
func LoopbackURL(u string) error {
	pu, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("probe URL %q: %w", u, err)
	}
	if pu.Scheme != "http" && pu.Scheme != "https" {
		return fmt.Errorf("probe URL %q: scheme must be http or https", u)
	}
	if pu.User != nil {
		return fmt.Errorf("probe URL %q: no user info", u)
	}
	if h := pu.Hostname(); h != "localhost" {
		// IPv4-mapped IPv6 forms (::ffff:127.0.0.1) are refused: one spelling per address keeps
		// the check simple to reason about.
		ip := net.ParseIP(h)
		if ip == nil || !ip.IsLoopback() || (strings.Contains(h, ":") && ip.To4() != nil) {
			return fmt.Errorf("probe URL %q: host must be a loopback address (127.0.0.0/8, ::1 or localhost)", u)
		}
	}
	if port := pu.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("probe URL %q: port %q is not in 1-65535", u, port)
		}
	} else if strings.HasSuffix(pu.Host, ":") {
		return fmt.Errorf("probe URL %q: empty port", u)
	}
	return nil
}

// Probes maps each unit and pod to the probes of the rules that act on it.
func (p *Policy) Probes() map[string][]Probe {
	m := map[string][]Probe{}
	for _, r := range p.Rules {
		if r.Probe == nil {
			continue
		}
		for _, k := range append(append([]string{}, r.Services...), r.Pods...) {
			m[k] = append(m[k], *r.Probe)
		}
	}
	return m
}
