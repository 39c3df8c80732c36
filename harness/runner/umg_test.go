package runner

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

// TestUnitsLocal: a run without servers keeps the experts' roles with local indexes (splade becomes
// bm25, the dense server LSA), and a splade expert without its server is a config error.
func TestUnitsLocal(t *testing.T) {
	u := UnitsConfig{Experts: []string{"splade", "dense", "bm25"}}
	u.Dense.Model, u.Sparse.BaseURL = "Qwen/Qwen3-Embedding-4B", "http://127.0.0.1:8082"
	l := u.Local()
	if !slices.Equal(l.Experts, []string{"bm25", "dense"}) || l.Dense.Model != "" || l.Sparse.BaseURL != "" {
		t.Fatalf("Local() = %+v", l)
	}
	if roleOf("splade", u.Experts) != "sparse" || roleOf("bm25", u.Experts) != "" || roleOf("bm25", l.Experts) != "sparse" || roleOf("dense", l.Experts) != "" {
		t.Fatal("roles: sparse is splade when present, else bm25")
	}
	yaml := "name: x\ndatasets:\n  - {name: nq_longdoc}\nmethods:\n  - {method: umg}\nllm: {backend: offline}\nretrieval:\n  units: {experts: [splade]}\n"
	if _, err := Parse("x.yaml", []byte(yaml), nil); err == nil || !strings.Contains(err.Error(), "retrieval.units.sparse") {
		t.Fatalf("splade without a server: %v", err)
	}
}

// TestUMGConfigsOffline: configs/umg-nq.yaml and umg-hotpotqa.yaml run end to end with --offline
// (the offline reader, BM25 and LSA unit indexes in the experts' places) on 3 questions, every cell
// answering without error; umg-nq in scope document over its 119 pages.
func TestUMGConfigsOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds unit indexes of 119 long pages: not in -short")
	}
	needData(t)
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"umg-nq.yaml", "umg-hotpotqa.yaml"} {
		t.Run(name, func(t *testing.T) {
			c, err := LoadLimited(filepath.Join(root, "configs", name), []string{"index_cache=" + indexCache}, 3)
			if err != nil {
				t.Fatal(err)
			}
			if c, err = Offline(c); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.Retrieval.Units.Experts, []string{"bm25", "dense"}) {
				t.Fatalf("offline experts %v", c.Retrieval.Units.Experts)
			}
			res, err := Execute(context.Background(), c, Options{Out: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if res.Errors > 0 || res.Done != 3*10 {
				t.Fatalf("answered %d, failed %d (want 30 answers: 5 methods × 2 models × 3 questions)", res.Done, res.Errors)
			}
		})
	}
}
