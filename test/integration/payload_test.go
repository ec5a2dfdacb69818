package integration

import (
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
)

// diffDecodePayload returns a config's files by path with decoded contents.
func diffDecodePayload(c *fixture.Config) (map[string][]byte, error) {
	p, err := diff.Decode(c.JSON())
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, f := range p.Config.Storage.Files {
		data, err := diff.FileContents(f)
		if err != nil {
			return nil, err
		}
		out[f.Path] = data
	}
	return out, nil
}

func diffDecodeEmpty() (*diff.Payload, error) {
	return diff.Decode(fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).JSON())
}
