//go:build !refreshtest

package actions

// CrashPoint marks a step of the transaction for the crash tests. In a release build it does
// nothing and compiles away: the crash points that kill or stop the process at a step live in
// crash_refreshtest.go, built only with -tags refreshtest.
func CrashPoint(string) {}
