package rusage

import (
	"testing"
	"time"
)

// TestCPUTimeGrows checks that a busy loop shows up in CPUTime and that PeakRSS sees memory this
// process touched.
func TestCPUTimeGrows(t *testing.T) {
	t0 := CPUTime()
	if t0 <= 0 {
		t.Skip("CPU time is not measured on this platform")
	}
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	if d := CPUTime() - t0; d < 10*time.Millisecond {
		t.Fatalf("CPUTime grew by %v over a 50 ms busy loop (%d steps)", d, x)
	}
	if s := CPUSeconds(); s < t0.Seconds() {
		t.Fatalf("CPUSeconds %v is below an earlier CPUTime %v", s, t0)
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
