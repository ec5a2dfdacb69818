package agent

import (
	"math/rand/v2"
	"time"
)

// backoff doubles from min to max, each delay jittered up by as much as half of it so that many
// nodes retrying the same failure do not do it in lockstep; reset starts over.
type backoff struct {
	min, max, cur time.Duration
}

func newBackoff(min, max time.Duration) *backoff { return &backoff{min: min, max: max} }

func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	} else {
		b.cur = min(b.cur*2, b.max)
	}
	return jitter(b.cur)
}

func (b *backoff) reset() { b.cur = 0 }

// jitter returns d plus a random part of up to d/2.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	return d + rand.N(d/2+1)
}
