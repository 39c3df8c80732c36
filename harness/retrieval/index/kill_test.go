package index

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval/bm25"
	"github.com/ragbench/ragbench/internal/testenv"
)

// killChildEnv makes the test binary a child that rebuilds the index at its value and exits.
const killChildEnv = "RAGBENCH_KILL_BUILD_OUT"

func buildFrom(t testing.TB, corpusPath string, cfg BuildConfig) error {
	src, err := corpus.OpenSource(context.Background(), corpus.SourceConfig{Path: corpusPath})
	if err != nil {
		return err
	}
	return Build(context.Background(), src, cfg, nil)
}

// answers returns the top 5 ids of each query on the BM25 index in dir.
func answers(t *testing.T, dir string, queries []string) [][]string {
	t.Helper()
	ix, err := Open(context.Background(), Config{Dir: dir})
	if err != nil {
		t.Fatalf("the old index no longer opens: %v", err)
	}
	defer ix.Close()
	var out [][]string
	for _, q := range queries {
		hits, err := ix.Retrieve(context.Background(), q, 5)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		out = append(out, ids)
	}
	return out
}

// TestKilledBuildKeepsOldIndex kills a forced rebuild with SIGKILL at random moments (at least ten
// times mid-build) and checks that the index it was replacing still opens and answers exactly as
// before, and that the next build removes what the killed ones left.
func TestKilledBuildKeepsOldIndex(t *testing.T) {
	corpusPath := testenv.Data(t, "corpus/nq-wiki-passages.tsv")
	if out := os.Getenv(killChildEnv); out != "" {
		// The child: a slow rebuild (two unit sizes) with other parameters, forced over the old index.
		err := buildFrom(t, corpusPath, BuildConfig{Kind: KindBM25, Dir: out, Units: []int{2, 8}, Force: true,
			BM25: bm25.Options{K1: 1.2, B: 0.75}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("kills ten builds")
	}
	root := t.TempDir()
	out := filepath.Join(root, "idx")
	if err := buildFrom(t, corpusPath, BuildConfig{Kind: KindBM25, Dir: out}); err != nil {
		t.Fatal(err)
	}
	queries := []string{"who wrote does he love you", "when was the eiffel tower built", "capital of norway", "the beatles first album", "largest planet in the solar system"}
	want := answers(t, out, queries)

	// Time one whole child build, to spread the kills over it.
	start := time.Now()
	probe := exec.Command(os.Args[0], "-test.run", "^TestKilledBuildKeepsOldIndex$")
	probe.Env = append(os.Environ(), killChildEnv+"="+filepath.Join(root, "probe"))
	if b, err := probe.CombinedOutput(); err != nil {
		t.Fatalf("probe build: %v\n%s", err, b)
	}
	full := time.Since(start)
	rng := rand.New(rand.NewPCG(7, 11))
	killed := 0
	for try := 0; killed < 10 && try < 40; try++ {
		child := exec.Command(os.Args[0], "-test.run", "^TestKilledBuildKeepsOldIndex$")
		child.Env = append(os.Environ(), killChildEnv+"="+out)
		stderr, _ := child.StderrPipe()
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { // drain
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
			}
		}()
		wait := time.Duration(rng.Float64() * 0.7 * float64(full))
		done := make(chan error, 1)
		go func() { done <- child.Wait() }()
		select {
		case err := <-done:
			t.Logf("try %d: the build finished before the kill at %s (%v); rebuilding the old index", try, wait, err)
			if err := buildFrom(t, corpusPath, BuildConfig{Kind: KindBM25, Dir: out, Force: true}); err != nil {
				t.Fatal(err)
			}
			continue
		case <-time.After(wait):
		}
		child.Process.Kill()
		<-done
		if _, err := os.Stat(filepath.Join(out, "g2")); err == nil {
			// The kill landed after the swap: the new (unit) index is complete and in place.
			t.Logf("try %d: killed at %s after the new index was in place; rebuilding the old index", try, wait)
			if err := buildFrom(t, corpusPath, BuildConfig{Kind: KindBM25, Dir: out, Force: true}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		killed++
		if got := answers(t, out, queries); !reflect.DeepEqual(got, want) {
			t.Fatalf("kill %d at %s: the old index answers differently:\n got %v\nwant %v", killed, wait, got, want)
		}
	}
	if killed < 10 {
		t.Fatalf("only %d builds were killed mid-way", killed)
	}
	// The next build cleans up after the killed ones.
	if err := buildFrom(t, corpusPath, BuildConfig{Kind: KindBM25, Dir: out, Force: true}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "idx.") {
			t.Errorf("leftover of a killed build: %s", e.Name())
		}
	}
}
