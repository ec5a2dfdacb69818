package allowlist

import "strings"

// A script may set a variable the judge knows from the unit (Environment=, the manager's
// *_DIRECTORY): D=/etc/cron.d, read D, for D in, printf -v D, export/declare/local D=, mapfile D,
// getopts D, D[0]=, ${D:=…}, unset D. The judge does not follow the script's flow, so such a name's
// value is unknown for the whole script (round 11, adversary exec/03: Environment=D=/run/myapp with
// `D=/etc/cron.d; rm -rf $D` removed /etc/cron.d).

// withoutAssigned returns j with every known variable the script s may set made unknown.
func (j judge) withoutAssigned(s string) judge {
	var drop []string
	for k := range j.env {
		if mayAssign(s, k) {
			drop = append(drop, k)
		}
	}
	if len(drop) == 0 {
		return j
	}
	env := make(map[string]string, len(j.env))
	for k, v := range j.env {
		env[k] = v
	}
	for _, k := range drop {
		delete(env, k)
	}
	j.env = env
	return j
}

// mayAssign says whether the name stands in s anywhere but as a plain reference ($k, ${k}, ${k…}
// other than ${k=…}/${k:=…}, ${#k}, ${!k}): a bare word naming it may be an assignment.
func mayAssign(s, k string) bool {
	for i := 0; i+len(k) <= len(s); i++ {
		if s[i:i+len(k)] != k || i > 0 && isNameByte(s[i-1]) || i+len(k) < len(s) && isNameByte(s[i+len(k)]) {
			continue
		}
		after := s[i+len(k):]
		switch {
		case i > 0 && s[i-1] == '$':
			continue // $k
		case i > 1 && s[i-1] == '{' && s[i-2] == '$':
			if len(after) > 0 && after[0] == '=' || len(after) > 1 && after[0] == ':' && after[1] == '=' {
				return true // ${k=…}, ${k:=…} assign
			}
			continue // ${k}, ${k:-…}, ${k#…}
		case i > 2 && (s[i-1] == '#' || s[i-1] == '!') && s[i-2] == '{' && s[i-3] == '$':
			continue // ${#k}, ${!k}
		}
		return true
	}
	return false
}

// setVar returns j with the variable k set to v for what runs next (unknown when v holds an
// expansion, a specifier or a substitution).
func (j judge) setVar(k, v string) judge {
	env := make(map[string]string, len(j.env)+1)
	for n, x := range j.env {
		env[n] = x
	}
	if strings.ContainsAny(v, "$%`") {
		delete(env, k)
	} else {
		env[k] = v
	}
	j.env = env
	return j
}
