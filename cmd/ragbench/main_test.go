package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// runCLI runs the command line in-process and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), append([]string{"ragbench"}, args...), &out, &errb)
	code := exitCode(err, &errb)
	return out.String(), errb.String(), code
}

func TestExitCodes(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"help succeeds", []string{"--help"}, 0},
		{"env succeeds", []string{"env"}, 0},
		{"unknown command is a usage error", []string{"no-such-command"}, 2},
		{"unknown flag is a usage error", []string{"env", "--no-such-flag"}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit code %d, want %d (stderr %q)", code, tc.code, stderr)
			}
		})
	}
}

func TestEnvPrintsVersion(t *testing.T) {
	out, _, code := runCLI(t, "env")
	if code != 0 || !strings.Contains(out, "ragbench") || !strings.Contains(out, "GOMAXPROCS=") || strings.Contains(out, "kernels") {
		t.Fatalf("code %d out %q", code, out)
	}
}
