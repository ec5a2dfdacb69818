package allowlist

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	k8sjson "sigs.k8s.io/json"

	"github.com/openshift/refresh-agent/diff"
)

// MaxJudgedFile and maxJudgedNodes bound a file whose contents a judge reads (a static pod
// manifest, a credential provider config, nmstate's state, a unit file or dropin): HyperShift's and
// the MCO's are under 4 KiB and 200 YAML nodes. The plan decodes a judged file's contents only up
// to MaxJudgedFile (gzip streamed, never allocated past it). The parse of the largest accepted
// costs a few MiB (checked before parsing, as the payload's own YAML is).
const (
	MaxJudgedFile  = diff.MaxJudgedFile
	maxJudgedNodes = 8000
)

// checkJudgedSize refuses a judged file over the bounds, before anything parses it.
func checkJudgedSize(data []byte) error {
	if len(data) > MaxJudgedFile {
		return fmt.Errorf("%d bytes, more than the %d a judged file may hold", len(data), MaxJudgedFile)
	}
	if n := diff.YAMLNodes(data); n > maxJudgedNodes {
		return fmt.Errorf("up to %d YAML nodes, more than the %d a judged file may hold", n, maxJudgedNodes)
	}
	return nil
}

// decodeKubeFile decodes a file the kubelet reads as a Kubernetes object (YAML or JSON), as the
// kubelet does (k8s.io/apimachinery/pkg/util/yaml.ToJSON: JSON as it is, YAML through
// sigs.k8s.io/yaml's conversion, then a case-sensitive JSON decode), but stricter wherever the two
// could differ, so that what is judged is what the kubelet runs: the size and the YAML nodes are
// bounded before parsing (diff.YAMLToJSON, the payload's converter), anchors, aliases and a second
// document are refused, and so are a key given twice and any key the type does not have (a
// miscased "HostPID" that a case-insensitive decoder would take, a field of a newer API).
func decodeKubeFile(data []byte, into any) error {
	if err := checkJudgedSize(data); err != nil {
		return err
	}
	js := data
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		var err error
		if js, err = diff.YAMLToJSON(data); err != nil {
			return errors.New(oneLineErr(err))
		}
	} else if _, err := diff.YAMLToJSON(data); err != nil {
		// JSON is YAML: the converter's strict pass refuses a key given twice, which the
		// kubelet's JSON decode would let the last one win.
		return errors.New(oneLineErr(err))
	}
	if t := bytes.TrimSpace(js); len(t) == 0 || string(t) == "null" {
		return errors.New("no document")
	}
	strict, err := k8sjson.UnmarshalStrict(js, into, k8sjson.DisallowDuplicateFields, k8sjson.DisallowUnknownFields)
	if err != nil {
		return fmt.Errorf("not decodable: %s", oneLineErr(err))
	}
	if len(strict) > 0 {
		msgs := make([]string, 0, len(strict))
		for _, e := range strict {
			msgs = append(msgs, e.Error())
		}
		return fmt.Errorf("%s (a field the judge does not know is refused)", strings.Join(msgs, "; "))
	}
	return nil
}

// oneLineErr is a decoder's message on one line, its long quoted values cut and what may be a
// credential redacted (the decoders quote the value they refuse: adversary r22 c/01).
func oneLineErr(err error) string {
	return redact(diff.QuotedCut(strings.Join(strings.Fields(err.Error()), " ")))
}
