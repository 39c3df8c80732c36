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
		{"a bare ragbench prints help and is a usage error", nil, 2},
		{"a missing required flag is a usage error", []string{"index", "build", "--corpus", "x.tsv"}, 2},
		{"a repeated single-value flag is a usage error", []string{"score", "--dataset", "a", "--dataset", "b", "--predictions", "p"}, 2},
		{"a repeated --flag=value is a usage error", []string{"search", "--index=a", "--index=b", "--query", "q"}, 2},
		{"a repeatable flag may be repeated", []string{"text", "split-eval", "--dataset", "nope1", "--dataset", "nope2"}, 1},
		{"global flags go before or after the command", []string{"--quiet", "env", "--verbose"}, 0},
		{"a stray word is a usage error, not ignored", []string{"search", "--index", "x", "stray", "--k", "1"}, 2},
		{"env takes no arguments", []string{"env", "stray"}, 2},
		{"datasets list takes no arguments", []string{"datasets", "list", "stray"}, 2},
		{"dense bench takes no arguments", []string{"dense", "bench", "stray"}, 2},
		{"index bench takes no arguments", []string{"index", "bench", "stray"}, 2},
		{"a flag after the argument is a flag (report RUN --out X is --out)", []string{"report", "../../reports/testdata/runs/offline", "-f", "xls"}, 2},
		{"compare BASE NEW --fail-on-regression", []string{"compare", "../../reports/testdata/runs/offline", "../../reports/testdata/runs/offline", "--fail-on-regression"}, 0},
		{"report RUN --paper reads --paper as a flag (here: a usage error for the bad level, not a missing run named --paper)", []string{"report", "../../reports/testdata/runs/offline", "--paper", "--level", "2"}, 2},
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

func TestUsageMessages(t *testing.T) {
	out, stderr, _ := runCLI(t)
	if out != "" || !strings.Contains(stderr, "USAGE") || !strings.Contains(stderr, "COMMANDS:") || !strings.Contains(stderr, "no command given") {
		t.Errorf("bare ragbench: stdout %q, stderr %q; want help and the reason on stderr", out, stderr)
	}
	out, stderr, _ = runCLI(t, "index", "build", "--corpus", "x.tsv")
	if out != "" || !strings.Contains(stderr, "index build needs --out (see 'ragbench index build --help')") {
		t.Errorf("missing --out: stdout %q, stderr %q; want a message naming --out and nothing on stdout", out, stderr)
	}
	_, stderr, _ = runCLI(t, "score", "-d", "a", "--dataset", "b", "--predictions", "p")
	if !strings.Contains(stderr, "--dataset is given more than once") {
		t.Errorf("an alias and its flag: stderr %q", stderr)
	}
}

func TestVersionNamesTheCommit(t *testing.T) {
	out, _, code := runCLI(t, "--version")
	if code != 0 || !strings.Contains(out, "(commit ") {
		t.Fatalf("--version: exit %d, %q; want the module version and the commit", code, out)
	}
	out, _, _ = runCLI(t, "env")
	if !strings.Contains(out, "\ncommit ") {
		t.Fatalf("env does not print the commit:\n%s", out)
	}
}

func TestEnvPrintsVersion(t *testing.T) {
	out, _, code := runCLI(t, "env")
	if code != 0 || !strings.Contains(out, "ragbench") || !strings.Contains(out, "GOMAXPROCS=") || strings.Contains(out, "kernels") {
		t.Fatalf("code %d out %q", code, out)
	}
}
