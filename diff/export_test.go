package diff

// CheckEmbeddedWhole is CheckEmbedded with every embedded config decoded whole (the reference the
// streamed check is held to).
func CheckEmbeddedWhole(p *Payload) string { return checkEach(p, checkEmbeddedWhole) }

// Streamed reports whether the decode's walk settled the embedded config at path (CheckEmbedded
// decodes only its reduced form), and how many of its sources the placeholders stand for.
func Streamed(p *Payload, path string) (bool, int) {
	e, ok := p.embedded[path]
	if !ok || e.config == nil || e.config.none {
		return false, 0
	}
	if _, err := e.config.decode(p, e.charged); err != nil {
		return false, 0
	}
	return true, len(e.config.sources)
}

// DecodeWhole is Decode with no source aliased (alias.go): the reference the aliased decode is held to.
func DecodeWhole(raw []byte) (*Payload, error) {
	d := newDecoder()
	d.whole = true
	if err := d.charge(int64(len(raw)), "payload"); err != nil {
		return nil, err
	}
	p, _, err := d.decode(raw, 0)
	d.measure(p)
	return p, err
}
