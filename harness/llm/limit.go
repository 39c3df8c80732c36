package llm

import (
	"context"
	"math"
	"sync"
	"time"
)

// bucket is a token bucket that refills at perMinute/60 per second up to burst. Take waits until the
// level covers min(n, burst) and then subtracts n, so the level may go negative: a request larger
// than the burst is let through when the bucket is full and the debt is paid before the next one.
// Over any interval of length t at most burst + rate*t + (one request) is granted.
type bucket struct {
	mu    sync.Mutex
	rate  float64 // per second
	burst float64
	level float64
	last  time.Time
	now   func() time.Time
}

// newBucket returns nil for an unlimited bucket (perMinute <= 0). The burst is one second's worth,
// at least 1, so that a limit holds over short windows too.
func newBucket(perMinute int) *bucket {
	if perMinute <= 0 {
		return nil
	}
	rate := float64(perMinute) / 60
	burst := math.Max(1, math.Ceil(rate))
	return &bucket{rate: rate, burst: burst, level: burst, now: time.Now}
}

func (b *bucket) refill(now time.Time) {
	if !b.last.IsZero() {
		b.level = math.Min(b.burst, b.level+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
}

// take waits until n units can be taken, or ctx ends.
func (b *bucket) take(ctx context.Context, n float64) error {
	if b == nil {
		return nil
	}
	need := math.Min(n, b.burst)
	for {
		b.mu.Lock()
		now := b.now()
		b.refill(now)
		if b.level >= need {
			b.level -= n
			b.mu.Unlock()
			return nil
		}
		wait := time.Duration((need - b.level) / b.rate * float64(time.Second))
		b.mu.Unlock()
		if wait < time.Millisecond {
			wait = time.Millisecond
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// adjust corrects the level by delta units already granted (positive: more were used than taken).
func (b *bucket) adjust(delta float64) {
	if b == nil || delta == 0 {
		return
	}
	b.mu.Lock()
	b.refill(b.now())
	b.level = math.Min(b.burst, b.level-delta)
	b.mu.Unlock()
}
