package memory

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

const smaps = `00400000-01182000 r-xp 00000000 08:01 123 /bin/agent
Rss:               10504 kB
Private_Dirty:       696 kB
Shared_Dirty:          0 kB
Anonymous:             0 kB
01182000-0204c000 r--p 00d82000 08:01 123 /bin/agent
Rss:               10408 kB
Private_Dirty:         8 kB
Anonymous:             8 kB
0204c000-020ea000 rw-p 01c4c000 08:01 123 /bin/agent
Private_Dirty:         0 kB
Anonymous:             0 kB
7f0000000000-7f0000001000 r--p 00000000 08:01 456 /lib/other.so
Private_Dirty:         0 kB
Anonymous:             0 kB
7f0000002000-7f0000003000 r--p 00000000 08:01 123 /bin/agent
Anonymous:             4 kB
7f0000004000-7f0000005000 r--p 00000000 08:01 123 /bin/agent (deleted)
Anonymous:             0 kB
7f0000006000-7f0000007000 r--p 00000000 08:01 123 /bin/agent
Anonymous:             0 kB
Swap:                  4 kB
`

// Only the clean read-only mappings of the executable are dropped: never a writable one, a
// mapping with a private copy (RELRO after relocation), resident or swapped out, another file's.
func TestParseSmapsKeepsOnlyCleanReadOnlyMappings(t *testing.T) {
	got := parseSmaps([]byte(smaps), "/bin/agent")
	if len(got) != 1 || got[0].start != 0x400000 || got[0].end != 0x1182000 {
		// (a dirty page-cache page, Private_Dirty without Anonymous, is the file's content: kept
		// by the page cache, and the text mapping is dropped all the same)
		t.Fatalf("got %+v, want the text mapping only", got)
	}
	if got := parseSmaps([]byte("garbage\n- x\n0-0 r-xp 0 0 0 /bin/agent\n"), "/bin/agent"); len(got) != 0 {
		t.Fatalf("garbage: %+v", got)
	}
}

func rssFile(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "RssFile:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	t.Skip("no RssFile")
	return 0
}

// Release drops the executable's resident pages from this very process, which goes on running
// (its code faults back in).
func TestReleaseDropsCodePagesAndTheProcessGoesOn(t *testing.T) {
	before := rssFile(t)
	Release()
	after := rssFile(t)
	t.Logf("RssFile %d kB -> %d kB", before, after)
	if after >= before {
		t.Fatalf("RssFile did not fall: %d kB -> %d kB", before, after)
	}
	// Code and read-only data still work after the drop.
	if s := strings.Repeat("x", 3) + strconv.Itoa(42); s != "xxx42" {
		t.Fatal(s)
	}
}
