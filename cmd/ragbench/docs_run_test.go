package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ragbench/ragbench/internal/testenv"
)

// docPlaceholders fill the placeholders of runnable doc lines, in order (longest first).
var docPlaceholders = []struct{ re, with string }{
	{`\bCONFIG\.yaml\b`, "configs/quickstart.yaml"},
	{`\bRUN_DIR\b|\bRUN\b|\bBASE\b|\bNEW\b`, "runs/quickstart"},
	{`\bIDX\b`, "idx/bm25-nq"},
	{`\bDIR\b`, "$DOCRUN_TMP/dir"}, // a directory that does not exist yet
}

// userFileRE marks a file only the user has (their own corpus, a download this machine cannot make):
// docs name it YOUR_…, and such a line is checked for its flags (TestDocCommandLines) but not run.
// Every other file a line reads must be made by a line before it in the same doc.
var userFileRE = regexp.MustCompile(`\bYOUR_[\w.-]+`)

// serverLine reports whether a doc line needs a server this machine does not have (an LLM, an
// embeddings or Elasticsearch endpoint, the Infini-gram API, the Hugging Face Hub): it must then
// fail fast and say why.
func serverLine(s string) bool {
	for _, k := range []string{"127.0.0.1", "localhost", "--api", "elastic ", "llm ping", "llm bench", "--backend openai", "datasets fetch", "--embedder openai", "--embed-model", "api.openai"} {
		if strings.Contains(s, k) {
			return true
		}
	}
	if strings.Contains(s, "--offline") || strings.Contains(s, "llm.backend=offline") || strings.Contains(s, "--backend offline") {
		return false
	}
	// The paper configs name an LLM server (and Elasticsearch, the Infini-gram API).
	return strings.Contains(s, "llm complete") || regexp.MustCompile(`configs/(quco|umg)-[\w-]+\.yaml`).MatchString(s)
}

// TestDocCommandLinesRun runs every runnable command line of README.md and docs/ as written, in doc
// order, each doc file in a fresh scratch checkout (symlinks to this one, ../shared beside it),
// placeholders filled: each
// must exit 0, or, needing a server, exit non-zero within a minute with a message. It takes many
// minutes, so it runs only with RAGBENCH_DOCS_RUN=1 (and -timeout 0):
//
//	RAGBENCH_DOCS_RUN=1 go test ./cmd/ragbench -run TestDocCommandLinesRun -timeout 0 -v
//
// A line still running after RAGBENCH_DOCS_LINE_TIMEOUT (default 2m) is stopped and counted slow:
// it fails only when it printed nothing by then. RAGBENCH_DOCS_FILE=reports.md (a comma-separated list
// of base names) runs only those docs.
//
// What runs: every ragbench line of a fenced block, and in a sh/bash block also the other lines that
// make a file (ending in "> FILE"), which the lines after them read. Not run: synopses ([--flag], a|b,
// ...), inline code spans, "ngram serve" (a server that runs until stopped), and lines naming a
// YOUR_… file (userFileRE). A yaml block's ragbench lines (a CI workflow's steps) run in the checkout
// with GITHUB_WORKSPACE set to it; the workflow's other lines (cd, git worktree) are not run.
func TestDocCommandLinesRun(t *testing.T) {
	if os.Getenv("RAGBENCH_DOCS_RUN") != "1" {
		t.Skip("set RAGBENCH_DOCS_RUN=1 to run every doc command line (many minutes)")
	}
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	shared, err := filepath.Abs(filepath.Join(root, "..", "shared"))
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	bin := filepath.Join(ws, "bin")
	os.MkdirAll(bin, 0o755)
	// Each doc file runs in a fresh checkout of its own (a reader follows one page), ../shared beside it.
	checkouts := map[string]string{}
	checkout := func(file string) string {
		if d, ok := checkouts[file]; ok {
			return d
		}
		top := filepath.Join(ws, fmt.Sprint(len(checkouts)))
		repo := filepath.Join(top, "repo")
		os.MkdirAll(repo, 0o755)
		if err := os.Symlink(shared, filepath.Join(top, "shared")); err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if n := e.Name(); n != "runs" && n != "idx" && !strings.HasPrefix(n, ".") {
				os.Symlink(filepath.Join(root, n), filepath.Join(repo, n))
			}
		}
		checkouts[file] = repo
		return repo
	}
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "ragbench"), "./cmd/ragbench")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	userCache := os.Getenv("RAGBENCH_CACHE")
	if userCache == "" {
		home, _ := os.UserHomeDir()
		userCache = filepath.Join(home, ".cache", "ragbench")
	}
	// Go's caches stay the user's too (HOME is a scratch one), so that a "go run" line does not
	// rebuild every dependency.
	goEnv, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	var goVars []string
	for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		goVars = append(goVars, k+"="+strings.Split(strings.TrimSpace(string(goEnv)), "\n")[i])
	}
	lineTimeout := 2 * time.Minute
	if d, err := time.ParseDuration(os.Getenv("RAGBENCH_DOCS_LINE_TIMEOUT")); err == nil {
		lineTimeout = d
	}
	only := map[string]bool{}
	for _, f := range strings.Split(os.Getenv("RAGBENCH_DOCS_FILE"), ",") {
		if f = strings.TrimSpace(f); f != "" {
			only[f] = true
		}
	}
	var ok, failed, slow, servers, userFiles int
	for _, l := range docCommandLines(t) {
		if len(only) > 0 && !only[filepath.Base(l.file)] {
			continue
		}
		if l.synopsis || l.inline || strings.Contains(l.text, "ngram serve") {
			continue // a synopsis; a mention in prose; a server that runs until stopped
		}
		if userFileRE.MatchString(l.text) {
			userFiles++
			continue
		}
		line := l.text
		for _, p := range docPlaceholders {
			line = regexp.MustCompile(p.re).ReplaceAllLiteralString(line, p.with)
		}
		tmp := filepath.Join(ws, "tmp", fmt.Sprint(l.line))
		os.MkdirAll(tmp, 0o755)
		ctx, cancel := context.WithTimeout(context.Background(), lineTimeout)
		cmd := exec.CommandContext(ctx, "bash", "-c", strings.Join(append(append([]string(nil), l.vars...), line), "\n"))
		cmd.Dir = checkout(l.file)
		// HOME is a scratch one (lines write into ~/.cache/ragbench/data); the index cache stays the
		// user's, so that indexes built once are reused.
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "DOCRUN_TMP="+tmp, "OPENAI_BASE_URL=", "OPENAI_MODEL=",
			"HF_ENDPOINT=http://127.0.0.1:9", "HOME="+filepath.Join(ws, "home"), "RAGBENCH_CACHE="+userCache)
		cmd.Env = append(cmd.Env, goVars...)
		if l.ci {
			// A CI workflow's step runs in the checkout, which GitHub names $GITHUB_WORKSPACE.
			cmd.Env = append(cmd.Env, "GITHUB_WORKSPACE="+cmd.Dir)
		}
		cmd.WaitDelay = 5 * time.Second
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		el := time.Since(start)
		timedOut := ctx.Err() != nil
		cancel()
		where := fmt.Sprintf("%s:%d", l.file, l.line)
		switch {
		case timedOut:
			slow++
			if stdout.Len()+stderr.Len() == 0 {
				t.Errorf("%s: printed nothing in %v: %s", where, lineTimeout, l.text)
			} else {
				t.Logf("%s: slow, stopped after %v (it was printing): %s", where, lineTimeout, l.text)
			}
		case !l.shell && serverLine(l.text):
			servers++
			if err == nil {
				t.Logf("%s: a server line succeeded: %s", where, l.text)
			} else if el > time.Minute || strings.TrimSpace(stderr.String()) == "" {
				t.Errorf("%s: a server line failed after %v with stderr %q; want fast and clear: %s", where, el.Round(time.Second), lastLine(stderr.String()), l.text)
			}
		case err != nil:
			failed++
			t.Errorf("%s: %v in %v: %s\n\tstderr: %s", where, err, el.Round(time.Millisecond), l.text, lastLine(stderr.String()))
		default:
			ok++
		}
	}
	t.Logf("doc lines run: %d ok, %d failed, %d slow (stopped), %d needing a server; %d naming a user's file (not run)", ok, failed, slow, servers, userFiles)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
