//go:build !norelease

package memory

// dropExecutable: Release drops the executable's clean pages from the process.
const dropExecutable = true
