// Package memory gives an idle agent's memory back to the node. The agent sits idle for weeks
// between refreshes; what it touched to start and to refresh (the heap's garbage, and the pages of
// its own code that only start-up and a refresh run) need not stay resident meanwhile.
package memory

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Release returns the heap's free pages to the kernel and drops the clean pages of the agent's own
// executable from its mappings (the Go runtime does not: of the ~20 MiB of code and read-only data
// the process start touches, most is package initialisation never run again). They stay in the
// page cache, so a later refresh maps them back with a minor fault, and the kernel may reclaim
// them meanwhile. Only read-only mappings of the executable without an anonymous page (a private
// copy) are dropped: their pages are the file's bytes, so nothing is lost. Errors are
// ignored: this is an optimisation.
func Release() {
	debug.FreeOSMemory()
	if !dropExecutable {
		return
	}
	for _, m := range exeMappings() {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_DONTNEED)
	}
}

type mapping struct{ start, end uintptr }

// exeMappings are found once (reading smaps walks every page of the process): the executable's
// mappings do not change while it runs, and a read-only mapping never gains a private copy.
var exeMappings = sync.OnceValue(func() []mapping {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return nil
	}
	return cleanMappings(exe)
})

// cleanMappings reads /proc/self/smaps for the read-only mappings of path with no anonymous page.
func cleanMappings(path string) []mapping {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return nil
	}
	return parseSmaps(b, path)
}

func parseSmaps(b []byte, path string) []mapping {
	var out []mapping
	var cur *mapping
	clean := false
	flush := func() {
		if cur != nil && clean {
			out = append(out, *cur)
		}
		cur = nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") { // a mapping's header: range perms offset dev inode [path]
			flush()
			if len(f) < 6 || strings.Join(f[5:], " ") != path || (f[1] != "r-xp" && f[1] != "r--p") {
				continue
			}
			lo, hi, ok := strings.Cut(f[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if !ok || err1 != nil || err2 != nil || end <= start {
				continue
			}
			cur, clean = &mapping{start: uintptr(start), end: uintptr(end)}, true
			continue
		}
		if cur == nil || len(f) < 2 {
			continue
		}
		// Anonymous counts the private copies of the mapping's pages (copy-on-write after a
		// write, as relocated RELRO pages are); their content is not the file's. Dirty page-cache
		// pages (a binary written moments ago) are the file's content, kept by the page cache.
		// Swap counts private copies swapped out (they show as no Anonymous page then).
		if (f[0] == "Anonymous:" || f[0] == "Swap:") && f[1] != "0" {
			clean = false
		}
	}
	flush()
	return out
}
