package main

import "github.com/openshift/refresh-agent/actions"

// testUnits stands in for systemd in a binary built with -tags refreshtest (the scale harness's
// failing nodes); nil in every other build, where --systemd accepts only system, user and none.
var (
	testUnits     func(root string) actions.Units
	testUnitsMode = "\x00" // no flag value can name it outside a refreshtest build
)
