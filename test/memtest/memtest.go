// Package memtest measures what a piece of code allocates, for tests that bound the cost of a parse.
package memtest

import "runtime"

// Allocated returns the bytes f allocates in total: an upper bound of the heap it adds at its peak.
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
