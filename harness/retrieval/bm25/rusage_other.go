//go:build !unix

package bm25

import (
	"time"
)

// CPUTime is not measured on this platform; it returns 0.
func CPUTime() time.Duration { return 0 }

// PeakRSS is not measured on this platform; it returns 0.
func PeakRSS() int64 { return 0 }
