package api

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// What agents wrote (the reason text pacing built, before and after NodeStatus) reads as the same wait.
func TestFromAnnotationsReadsOlderAgentsWaits(t *testing.T) {
	for reason, want := range map[string]Waiting{
		"waiting for a refresh slot (2/3 in use)":                                                                      {InUse: 2, Slots: 3},
		"waiting for a refresh slot (3/3 in use); halted: 3 nodes failed":                                              {InUse: 3, Slots: 3, Halted: true, Failed: 3},
		"waiting for a refresh slot (1/10 in use; its turn in the pool's order has not come); halted: 12 nodes failed": {InUse: 1, Slots: 10, Halted: true, Failed: 12},
		"waiting for a refresh slot (1/1 in use); halted: 1 node failed":                                               {InUse: 1, Slots: 1, Halted: true, Failed: 1},
		"waiting for a refresh slot":                                                                                   {}, // counts unknown: still a wait
	} {
		s := FromAnnotations(map[string]string{AnnotationState: StateWorking, AnnotationReason: reason})
		if s.Waiting == nil || *s.Waiting != want || s.Reason != "" {
			t.Errorf("%q: read %+v, reason %q; want %+v", reason, s.Waiting, s.Reason, want)
		}
		older := want.InUse < want.Slots && !strings.Contains(reason, "its turn") // before the turn was said
		if want.Slots > 0 && !older && s.ReasonText() != reason {
			t.Errorf("%q written back as %q", reason, s.ReasonText())
		}
	}
	// Before the singular, one failed node was "1 nodes failed": read the same.
	old := FromAnnotations(map[string]string{AnnotationReason: "waiting for a refresh slot (1/1 in use); halted: 1 nodes failed"})
	if old.Waiting == nil || *old.Waiting != (Waiting{InUse: 1, Slots: 1, Halted: true, Failed: 1}) {
		t.Errorf("old singular: %+v", old.Waiting)
	}
	s := FromAnnotations(map[string]string{AnnotationState: StateWorking, AnnotationReason: "deferred: halted: not a wait"})
	if s.Waiting != nil || s.Reason != "deferred: halted: not a wait" {
		t.Errorf("a reason that is not a wait read as %+v", s)
	}
}

func TestAnnotationsRoundTrip(t *testing.T) {
	for _, s := range []NodeStatus{
		{},
		{Current: "a", Desired: "a", State: StateDone},
		{Current: "a", Desired: "b", State: StateWorking, Waiting: &Waiting{InUse: 1, Slots: 1}},
		{Current: "a", Desired: "b", State: StateWorking, Waiting: &Waiting{InUse: 2, Slots: 2, Halted: true, Failed: 2}},
		{Current: "a", Desired: "b", State: StateDegraded, Reason: "crio.service: failed", Drift: "/etc/a,/etc/b"},
	} {
		got := FromAnnotations(s.Annotations())
		if !got.Equal(s) {
			t.Errorf("%+v read back as %+v", s, got)
		}
	}
	if _, ok := (NodeStatus{State: StateDone}).Annotations()[AnnotationDrift]; ok {
		t.Error("no drift must leave the drift annotation out (the agent's patch removes it)")
	}
	for _, k := range StatusAnnotations {
		if _, ok := (NodeStatus{Drift: "x"}).Annotations()[k]; !ok {
			t.Errorf("%s not written", k)
		}
	}
}

// Whatever a status holds, its annotations are bounded and read back as Bounded says.
func TestAnnotationsBounded(t *testing.T) {
	long := strings.Repeat("é", 2000) + "\xff"
	s := NodeStatus{State: StateDegraded, Reason: long, Drift: long}
	a := s.Annotations()
	for _, k := range []string{AnnotationReason, AnnotationDrift} {
		if len(a[k]) > MaxReasonLen || !utf8.ValidString(a[k]) || !strings.HasSuffix(a[k], "…") {
			t.Errorf("%s: %d bytes, valid %v", k, len(a[k]), utf8.ValidString(a[k]))
		}
	}
	if !FromAnnotations(a).Equal(s.Bounded()) {
		t.Error("Bounded differs from what the annotations read back as")
	}
	// A reason that reads as a wait is one, whoever wrote it: comparing in Bounded form never
	// patches the same status twice.
	w := NodeStatus{State: StateWorking, Reason: "waiting for a refresh slot (1/2 in use)"}
	if b := w.Bounded(); b.Waiting == nil || !FromAnnotations(w.Annotations()).Equal(b) {
		t.Errorf("Bounded: %+v", b)
	}
}

func TestEqual(t *testing.T) {
	a := NodeStatus{State: StateWorking, Waiting: &Waiting{InUse: 1, Slots: 2}}
	b := NodeStatus{State: StateWorking, Waiting: &Waiting{InUse: 1, Slots: 2}}
	if !a.Equal(b) {
		t.Error("equal waits by value differ")
	}
	b.Waiting.InUse = 2
	if a.Equal(b) || a.Equal(NodeStatus{State: StateWorking}) {
		t.Error("different waits compare equal")
	}
}

func TestTruncate(t *testing.T) {
	if Truncate("short", 10) != "short" {
		t.Error("a short string was cut")
	}
	for n := 0; n < 40; n++ {
		got := Truncate("日本語のテキスト abc \xfe def", n)
		if len(got) > n || !utf8.ValidString(got) {
			t.Errorf("Truncate(_, %d) = %q (%d bytes)", n, got, len(got))
		}
	}
	if got := Short("0123456789abcdef"); got != "0123456789ab" {
		t.Errorf("Short: %q", got)
	}
}
