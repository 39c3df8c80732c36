// Package rusage reads the process's resource usage for benchmark reports: the CPU time used so far and
// the peak resident set size. Benchmarks report CPU time next to wall time because the machine may be
// shared: CPU time shows the work done, wall time what a user waits. On a platform without getrusage
// the functions return 0, which reports leave out.
package rusage

import (
	"os"
	"strconv"
	"strings"
)

// CPUSeconds is CPUTime in seconds.
func CPUSeconds() float64 { return CPUTime().Seconds() }

// PeakRSS returns the process's peak resident set size in bytes: VmHWM from /proc/self/status where
// Linux has it (ResetPeakRSS resets it), else getrusage's maxrss; 0 when neither is available.
func PeakRSS() int64 {
	if data, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				if f := strings.Fields(rest); len(f) >= 1 {
					if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
						return kb << 10
					}
				}
			}
		}
	}
	return maxRSS()
}

// ResetPeakRSS resets the kernel's peak-RSS counter (VmHWM) of this process, where Linux allows it, so
// that PeakRSS measures from here on; elsewhere it does nothing.
func ResetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }
