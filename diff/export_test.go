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
	if _, err := e.config.decode(p); err != nil {
		return false, 0
	}
	return true, len(e.config.sources)
}
