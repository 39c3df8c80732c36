package rusage

import (
	"runtime"
	"testing"
	"time"
)

// sink keeps the busy loop's work from being optimised away.
var sink uint64

// burn does a fixed amount of arithmetic (well under a millisecond).
func burn() {
	x := sink
	for i := 0; i < 100_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink = x
}

// TestCPUTimeGrows checks that CPUTime counts the CPU this process burns, and only that, and that
// PeakRSS sees memory this process touched.
//
// The busy loop runs until CPUTime has grown by 50 ms, not for a set wall time: on a loaded machine
// this process gets a small share of a core, so 50 ms of wall time may hold only a few ms of CPU.
// What can fail is CPUTime itself: one that does not grow (or counts far too little) never reaches
// 50 ms and fails at the 20 s bound; one that counts too much grows faster than the cores allow;
// one that counts wall time grows while the process sleeps.
func TestCPUTimeGrows(t *testing.T) {
	t0 := CPUTime()
	if t0 <= 0 {
		t.Skip("CPU time is not measured on this platform")
	}
	const want, bound = 50 * time.Millisecond, 20 * time.Second
	start, steps := time.Now(), 0
	for CPUTime()-t0 < want {
		if time.Since(start) > bound {
			t.Fatalf("CPUTime grew by %v over %v of busy loop (%d steps), want %v", CPUTime()-t0, bound, steps, want)
		}
		burn()
		steps++
	}
	d, wall := CPUTime()-t0, time.Since(start)
	// One goroutine burns at most wall time; the runtime's threads (GC) at most NumCPU times it. The
	// slack covers the clock's tick granularity.
	if limit := wall*time.Duration(runtime.NumCPU()) + 20*time.Millisecond; d > limit {
		t.Fatalf("CPUTime grew by %v in %v of wall time on %d CPUs (limit %v)", d, wall, runtime.NumCPU(), limit)
	}
	if s := CPUSeconds(); s < (t0 + want).Seconds() {
		t.Fatalf("CPUSeconds %v is below an earlier CPUTime %v", s, t0+want)
	}

	// A sleeping process burns next to no CPU, however loaded the machine is.
	c0, w0 := CPUTime(), time.Now()
	time.Sleep(200 * time.Millisecond)
	if d, slept := CPUTime()-c0, time.Since(w0); d > slept/2 {
		t.Fatalf("CPUTime grew by %v while the process slept %v", d, slept)
	}

	b := make([]byte, 64<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	if p := PeakRSS(); p < 64<<20 {
		t.Fatalf("PeakRSS %d bytes after touching 64 MiB", p)
	}
	ResetPeakRSS()
	_ = b[len(b)-1]
}
