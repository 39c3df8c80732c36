package main

import (
	"strings"
	"testing"
)

func TestDenseBenchCLI(t *testing.T) {
	out, errOut, code := runCLI(t, "dense", "bench", "--n", "2000", "--dim", "16", "--queries", "20", "--batch", "8", "--naive", "4")
	if code != 0 || !strings.Contains(out, "2000 × 16") || !strings.Contains(out, "same top-10 rows as the naive loop: true") {
		t.Fatalf("code %d out %q err %q", code, out, errOut)
	}
	if _, _, code := runCLI(t, "dense", "bench", "--n", "0"); code != 2 {
		t.Fatalf("--n 0: exit %d, want 2", code)
	}
}
