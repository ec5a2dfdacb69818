package pacing

import (
	"strconv"
	"strings"
	"testing"
)

// oldParse is the hand-written parser intstr replaced, bounded to int32 as intstr is: the
// accepted inputs and their values must not change.
func oldParse(s string) (n, percent int, isPercent, ok bool) {
	s = strings.TrimSpace(s)
	if p, cut := strings.CutSuffix(s, "%"); cut {
		v, err := strconv.Atoi(p)
		return 0, v, true, err == nil && v >= 1 && v <= 100
	}
	v, err := strconv.ParseInt(s, 10, 32)
	return int(v), 0, false, err == nil && v >= 0
}

func FuzzParseLimit(f *testing.F) {
	for _, s := range []string{"0", "1", "10%", " 3 ", "100%", "+10%", "-1", "0%", "101%", "x", "%", "2147483648", "-0", "٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLimit(s)
		n, p, isP, ok := oldParse(s)
		if (err == nil) != ok {
			t.Fatalf("ParseLimit(%q) err %v, the old parser ok %v", s, err, ok)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "--max-concurrent") {
				t.Fatalf("error %q does not name the flag", err)
			}
			return
		}
		if l.IsPercent() != isP {
			t.Fatalf("ParseLimit(%q) percent %v, want %v", s, l.IsPercent(), isP)
		}
		for _, size := range []int{0, 1, 7, 100, 5000} {
			want := n
			if isP {
				want = max(size*p/100, 1)
			}
			if got := l.Slots(size); got != want {
				t.Fatalf("ParseLimit(%q).Slots(%d) = %d, want %d", s, size, got, want)
			}
		}
		again, err := ParseLimit(l.String())
		if err != nil || again != l {
			t.Fatalf("%q does not parse back to itself: %v, %v", l.String(), again, err)
		}
	})
}
