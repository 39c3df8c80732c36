package retry

import (
	"context"
	"net/http"
	"testing"
	"time"
)

func TestParseAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"no header waits nothing", http.Header{}, 0},
		{"nil header waits nothing", nil, 0},
		{"whole seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{"fractional seconds", http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{"an HTTP date in the future", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{"an HTTP date in the past is ignored", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"retry-after-ms wins over Retry-After", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{"garbage is ignored", http.Header{"Retry-After": {"soon"}}, 0},
		{"negative is ignored", http.Header{"Retry-After": {"-4"}}, 0},
		{"absurdly large is ignored", http.Header{"Retry-After": {"1e7"}}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseAfter(tc.h, now); got != tc.want {
				t.Fatalf("ParseAfter = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSleepStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := Sleep(ctx, time.Hour); err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// Sleeping out the hour is the bug; 5 s leaves a loaded machine room (it was 100 ms).
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("Sleep returned %v after a cancelled context", el)
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
}

func TestBackoffRangeAndCap(t *testing.T) {
	b := NewBackoff(100*time.Millisecond, 400*time.Millisecond)
	for i, d := range []time.Duration{100, 200, 400, 400, 400} {
		d *= time.Millisecond
		if w := b.Next(); w < d/2 || w >= d/2+d {
			t.Fatalf("call %d: wait %v outside [%v, %v)", i, w, d/2, d/2+d)
		}
	}
}
