//go:build refreshtest

package main

import (
	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/test/fixture"
)

// With -tags refreshtest, --systemd test-marker runs unit actions against fixture.MarkerUnits: they
// fail while /etc/containers/registries.conf holds fixture.FailMarker (tests and the scale harness
// only; never in a release build).
func init() {
	testUnitsMode = "test-marker"
	testUnits = func(root string) actions.Units {
		return &fixture.MarkerUnits{Root: root, Path: "/etc/containers/registries.conf"}
	}
}
