//go:build !unix

package bm25

import (
	"os"
	"time"
)

// mapFile reads the whole file where memory mapping is not available.
func mapFile(path string) ([]byte, error) { return os.ReadFile(path) }

func unmapFile([]byte) error { return nil }

// CPUTime is not measured on this platform; it returns 0.
func CPUTime() time.Duration { return 0 }

// PeakRSS is not measured on this platform; it returns 0.
func PeakRSS() int64 { return 0 }
