package plan

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
)

// unitView is every unit as the node's manager will load it once the refresh has written its files:
// the desired payload's unit files and drop-ins (written to /etc/systemd/system) over the node's
// own files (read under the node's root, allowlist.NodeUnitReader), the current payload's files
// the refresh removes gone. The plan judges a unit as this view defines it: the node's drop-ins of
// a unit the payload defines (/etc/systemd/system/myapp.service.d/10-node.conf, service.d/,
// myapp-.service.d/ …) merge into it as systemd merges them, and a unit a job reaches that the
// payload does not carry is read from the node. Without a root (a diff of two payloads) the view
// is the payload alone, and the plan says what it cannot see.
type unitView struct {
	node     allowlist.NodeUnitReader
	cur, des map[string]*types.Unit
	// unread are the node units the view could not read (judged by name), for a warning.
	unread []string
}

func newUnitView(cur, des *diff.Payload, pol *allowlist.Policy) *unitView {
	v := &unitView{node: pol.NodeUnitFiles(), cur: map[string]*types.Unit{}, des: map[string]*types.Unit{}}
	for _, pl := range []struct {
		p *diff.Payload
		m map[string]*types.Unit
	}{{cur, v.cur}, {des, v.des}} {
		if pl.p == nil {
			continue
		}
		for i := range pl.p.Config.Systemd.Units {
			u := &pl.p.Config.Systemd.Units[i]
			pl.m[u.Name] = u
		}
	}
	return v
}

// unitReads are the files units read as root (allowlist.NodeRead): the node's (every unit file and
// drop-in its manager loads: nodeReads) and the desired payload's units' and drop-ins', which the
// node will load once written (round 12).
func (v *unitView) unitReads() ([]allowlist.NodeRead, error) {
	var out []allowlist.NodeRead
	if v != nil && v.node != nil {
		r, err := nodeReads(v.node)
		if err != nil {
			return nil, err
		}
		out = append(out, r...)
	}
	if v == nil {
		return out, nil
	}
	names := make([]string, 0, len(v.des))
	for n := range v.des {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		u := v.des[n]
		if isTrue(u.Mask) {
			continue
		}
		texts := map[string]*string{"the payload's " + path.Join(UnitDir, n): u.Contents}
		for _, d := range u.Dropins {
			texts["the payload's "+path.Join(UnitDir, n+".d", d.Name)] = d.Contents
		}
		for _, f := range slices.Sorted(maps.Keys(texts)) {
			if texts[f] == nil {
				continue
			}
			r, ok, err := allowlist.NodeReadsOf(n, f, *texts[f], maxNodeReadPaths-len(out))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err) // validated by Ignition: never here
			}
			if !ok {
				return nil, fmt.Errorf("more than %d paths read", maxNodeReadPaths)
			}
			out = append(out, r...)
		}
	}
	return out, nil
}

// searchIndex is the position in the search path of the directory p (a node path) lies in.
func searchIndex(p string) int {
	best, idx := -1, len(unitSearchPath)
	for i, d := range unitSearchPath {
		if strings.HasPrefix(p, d+"/") && len(d) > best {
			best, idx = len(d), i
		}
	}
	return idx
}

// definition is the unit name as the manager will load it: the unit it is (a node link's target),
// its fragment (nil: none) and drop-ins in systemd's order, whether it is masked, the
// dependencies the node's .wants/.requires/.upholds links add, and whether anything defines it.
type definition struct {
	id                       string
	fragment                 *string
	dropins                  []types.Dropin
	masked, known            bool
	wants, requires, upholds []string
	// nodeFiles are the node's files the definition takes (none: the payload's alone).
	nodeFiles []string
}

// define merges the payload's definition of the unit u (nil: the payload does not define it) over
// the node's files.
func (v *unitView) define(name string, u *types.Unit) (definition, error) {
	d := definition{id: name}
	var node allowlist.NodeUnitDef
	nodeOK := false
	if v.node != nil {
		n, ok, err := v.node.ReadUnit(name)
		if err != nil {
			return d, err
		}
		node, nodeOK = n, ok
	}
	if nodeOK && node.Name != name && u == nil {
		d.id = node.Name // a link on the node: the unit linked to
	}
	own := path.Join(UnitDir, name)
	// The payload owns /etc/systemd/system/NAME and the drop-ins of NAME.d it names now or named before.
	old := v.cur[name]
	ownsFragment := u != nil && (u.Contents != nil || isTrue(u.Mask)) || old != nil && (old.Contents != nil || isTrue(old.Mask))
	ownsDropin := map[string]bool{}
	for _, x := range []*types.Unit{u, old} {
		if x != nil {
			for _, dr := range x.Dropins {
				ownsDropin[dr.Name] = true
			}
		}
	}
	type frag struct {
		idx    int
		path   string
		text   *string
		masked bool
	}
	// The name's own files (the payload's is one, at /etc/systemd/system) in search order, then
	// its template's: the first is the fragment.
	var frags, tmpl []frag
	if nodeOK {
		for _, f := range node.Fragments {
			if f.Path == own && ownsFragment {
				continue
			}
			text := f.Contents
			if f.Name == node.Name {
				frags = append(frags, frag{searchIndex(f.Path), f.Path, &text, f.Masked})
			} else {
				tmpl = append(tmpl, frag{searchIndex(f.Path), f.Path, &text, f.Masked})
			}
		}
	}
	if u != nil && (u.Contents != nil || isTrue(u.Mask)) {
		frags = append(frags, frag{searchIndex(own), own, u.Contents, isTrue(u.Mask)})
	}
	slices.SortStableFunc(frags, func(a, b frag) int { return a.idx - b.idx })
	frags = append(frags, tmpl...)
	if len(frags) > 0 {
		d.known = true
		d.masked = frags[0].masked
		d.fragment = frags[0].text
		if frags[0].path != own || u == nil || u.Contents == nil && !isTrue(u.Mask) {
			d.nodeFiles = append(d.nodeFiles, frags[0].path)
		}
	}
	var dropins []types.Dropin
	if nodeOK {
		for _, f := range node.Dropins {
			if path.Dir(f.Path) == own+".d" && ownsDropin[f.Name] {
				continue
			}
			if u != nil && payloadDropin(u, f.Name) && searchIndex(f.Path) >= searchIndex(own) {
				continue // the payload's file of that name replaces it
			}
			if f.Masked {
				continue
			}
			text := f.Contents
			dropins = append(dropins, types.Dropin{Name: f.Name, Contents: &text})
			d.nodeFiles = append(d.nodeFiles, f.Path)
		}
		d.wants, d.requires, d.upholds = node.Wants, node.Requires, node.Upholds
		d.known = d.known || len(node.Dropins) > 0
	}
	if u != nil {
		for _, dr := range u.Dropins {
			if !slices.ContainsFunc(dropins, func(x types.Dropin) bool { return x.Name == dr.Name }) {
				dropins = append(dropins, dr)
			}
		}
		d.known = true
	}
	slices.SortStableFunc(dropins, func(a, b types.Dropin) int { return strings.Compare(a.Name, b.Name) })
	d.dropins = dropins
	return d, nil
}

func payloadDropin(u *types.Unit, name string) bool {
	return slices.ContainsFunc(u.Dropins, func(d types.Dropin) bool { return d.Name == name })
}

// load reads the unit a job reaches as the view defines it (allowlist.JudgeStartSet's load): a
// node unit whose files the judge cannot read is judged by its name, and said so.
func (v *unitView) load(name string) (allowlist.StartedUnit, error) {
	u, err := v.loadUnit(name)
	if err == nil && u.Known && !u.Masked {
		v.withDependents(&u.Props)
	}
	return u, err
}

// loadUnit is load without the unit's reverse dependencies (withDependents).
func (v *unitView) loadUnit(name string) (allowlist.StartedUnit, error) {
	if !allowlist.IsUnitName(name) {
		return allowlist.StartedUnit{}, nil // no unit systemd could load: judged by its name
	}
	d, err := v.define(name, v.des[name])
	if err != nil {
		v.unread = append(v.unread, fmt.Sprintf("%s (%v)", name, err))
		return allowlist.StartedUnit{}, nil
	}
	if !d.known {
		return allowlist.StartedUnit{}, nil
	}
	if d.masked {
		return allowlist.StartedUnit{Known: true, Masked: true}, nil
	}
	p, err := v.props(d)
	if err != nil {
		v.unread = append(v.unread, fmt.Sprintf("%s (%v)", name, err))
		return allowlist.StartedUnit{}, nil
	}
	if d.id != name {
		p.Names = append(p.Names, name)
	}
	return allowlist.StartedUnit{Props: p, Known: true}, nil
}

// withDependents adds to p (a unit as the view defines it) the units that name it, as the manager
// will have them once the refresh has written its files: those that Requires= (Followers),
// Requisite= (RequisiteOf), BindsTo= (BoundBy) or PartOf= (ConsistsOf) it, whose StopPropagatedFrom=
// names it (its PropagatesStopTo) and whose Conflicts= names it (ConflictedBy: systemd makes
// Conflicts= symmetric, so its start stops them). The candidates are the payload's units whose
// texts name it and the node's whose files do (dependents: a drop-in directory's every unit); each
// is loaded as the manager will load it, and kept only if that definition names the unit (by its
// name or an alias). A template's instances are not known to the plan: the manager's walk (the dry
// run, the real run) sees those that run.
func (v *unitView) withDependents(p *allowlist.UnitProps) {
	targets := append([]string{p.ID}, p.Names...)
	var cands []string
	for _, n := range slices.Sorted(maps.Keys(v.des)) {
		u := v.des[n]
		texts := []*string{u.Contents}
		for _, d := range u.Dropins {
			texts = append(texts, d.Contents)
		}
		if slices.ContainsFunc(texts, func(t *string) bool {
			return t != nil && slices.ContainsFunc(targets, func(x string) bool { return x != "" && strings.Contains(*t, x) })
		}) {
			cands = append(cands, n)
		}
	}
	if v.node != nil {
		idx := dependents(v.node)
		if idx.err != nil && !slices.Contains(v.unread, "the node's reverse dependencies ("+idx.err.Error()+")") {
			v.unread = append(v.unread, "the node's reverse dependencies ("+idx.err.Error()+")")
		}
		for _, t := range targets {
			for _, owner := range idx.named[t] {
				cands = append(cands, idx.owned(owner)...)
			}
		}
	}
	slices.Sort(cands)
	for _, c := range slices.Compact(cands) {
		if slices.Contains(targets, c) || isTemplate(c) {
			continue
		}
		u, err := v.loadUnit(c)
		if err != nil || !u.Known || u.Masked {
			continue
		}
		id := u.Props.ID
		for _, d := range []struct {
			names []string
			to    *[]string
		}{{u.Props.Requires, &p.Followers}, {u.Props.Requisite, &p.RequisiteOf}, {u.Props.BindsTo, &p.BoundBy},
			{u.Props.PartOf, &p.ConsistsOf}, {u.Props.StopPropagatedFrom, &p.PropagatesStopTo}, {u.Props.Conflicts, &p.ConflictedBy}} {
			if slices.ContainsFunc(d.names, func(n string) bool { return slices.Contains(targets, n) }) && !slices.Contains(*d.to, id) {
				*d.to = append(*d.to, id)
			}
		}
	}
}

// owned are the unit names a file's owner (dependents) stands for: a unit, or the units a drop-in
// directory applies to (NAME.d; foo-.service.d every foo-….service the node has a file of;
// service.d every service).
func (d *nodeDependents) owned(owner string) []string {
	stem, ok := strings.CutSuffix(owner, ".d")
	if !ok {
		return []string{owner}
	}
	ext := path.Ext(stem)
	prefix := strings.TrimSuffix(stem, ext)
	if ext == "" { // a type's directory (service.d)
		ext, prefix = "."+stem, ""
	} else if !strings.HasSuffix(prefix, "-") {
		return []string{stem}
	}
	var out []string
	for _, u := range d.units {
		if path.Ext(u) == ext && strings.HasPrefix(u, prefix) {
			out = append(out, u)
		}
	}
	return out
}

// props reads what the definition says of the unit's jobs, as the manager reports it over D-Bus:
// the [Install] section is not the unit's (only enabling reads it), the .wants/ links are.
func (v *unitView) props(d definition) (allowlist.UnitProps, error) {
	p, err := unitFileProps(d.id, d.fragment, d.dropins)
	if err != nil {
		return p, err
	}
	p.Names = []string{d.id}
	p.Alias, p.WantedBy, p.RequiredBy, p.UpheldBy = nil, nil, nil, nil
	p.Wants = append(p.Wants, d.wants...)
	p.Requires = append(p.Requires, d.requires...)
	p.Upholds = append(p.Upholds, d.upholds...)
	return p, nil
}

// asLoaded is the unit name as systemctl enable and disable will read it, one file with its
// drop-ins in order: after the refresh (u is the desired payload's entry) or, before, as the node
// has it now (the current payload's entry over the node's files). Without a root, the payload's
// entry alone.
func (v *unitView) asLoaded(name string, u *types.Unit, before bool) (types.Unit, error) {
	if before {
		u = nil
		if v != nil {
			u = v.cur[name]
		}
	}
	if v == nil || v.node == nil {
		if u == nil {
			return types.Unit{Name: name}, nil
		}
		return *u, nil
	}
	view := v
	if before {
		view = &unitView{node: v.node, cur: v.cur, des: v.cur}
	}
	d, err := view.define(name, u)
	if err != nil {
		return types.Unit{Name: name}, err
	}
	if d.masked {
		return types.Unit{Name: name}, nil
	}
	return types.Unit{Name: name, Contents: d.fragment, Dropins: d.dropins}, nil
}
