//go:build !unix

package rusage

import "time"

// CPUTime is not measured on this platform; it returns 0.
func CPUTime() time.Duration { return 0 }

// maxRSS is not measured on this platform; it returns 0.
func maxRSS() int64 { return 0 }
