package integration

import (
	"context"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/publish"
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

func publishData(e *agentEnv, payload []byte, hash string) (string, error) {
	return publish.Publish(context.Background(), e.publisher, e.ns, e.cm, payload, nil, hash)
}
