//go:build norelease

package memory

// dropExecutable is off in a build with -tags norelease, which make bench runs beside the agent to
// measure what dropping the executable's pages changes in the working set (never shipped).
const dropExecutable = false
