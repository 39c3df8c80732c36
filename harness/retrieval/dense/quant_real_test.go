package dense

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/internal/testenv"
)

// TestInt8RecallOnRealPassages measures int8 search against float32 exact search on every real
// passage of ../shared/data/corpus (the NQ passages, the 2Wiki paragraphs, and the KILT pages cut at
// blank lines into paragraphs), embedded with LSA, queried with all 3,610 NQ-open dev questions: the
// recall@10 of int8 must be at least 0.99.
func TestInt8RecallOnRealPassages(t *testing.T) {
	if testing.Short() {
		t.Skip("fits LSA on the shared corpora")
	}
	ctx := context.Background()
	var docs []corpus.Document
	seen := map[string]bool{}
	add := func(d corpus.Document) {
		if strings.TrimSpace(d.Text) == "" || seen[d.Title+"\x00"+d.Text] {
			return
		}
		seen[d.Title+"\x00"+d.Text] = true
		d.ID = strconv.Itoa(len(docs))
		docs = append(docs, d)
	}
	for _, name := range []string{"corpus/nq-wiki-passages.tsv", "corpus/2wiki-paragraphs.jsonl", "corpus/kilt-wiki-pages.jsonl"} {
		path := testenv.Data(t, name)
		f, err := corpus.Detect(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := corpus.Each(ctx, path, f, func(d corpus.Document) error {
			if strings.Contains(name, "kilt") {
				for _, p := range strings.Split(d.Text, "\n\n") {
					add(corpus.Document{Title: d.Title, Text: p})
				}
				return nil
			}
			add(d)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	var queries []string
	qf, err := os.Open(testenv.Data(t, "raw/nq_open/NQ-open.dev.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer qf.Close()
	sc := bufio.NewScanner(qf)
	for sc.Scan() {
		var q struct{ Question string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		queries = append(queries, q.Question)
	}
	dim := 256
	if s := os.Getenv("RAGBENCH_LSA_DIM"); s != "" {
		dim, _ = strconv.Atoi(s)
	}
	lsa, err := FitLSA(ctx, corpus.NewSliceReader(docs), LSAConfig{Dim: dim}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	start := time.Now()
	if err := BuildWith(ctx, corpus.NewSliceReader(docs), lsa, dir, nil, BuildOptions{Int8: true}); err != nil {
		t.Fatal(err)
	}
	build := time.Since(start)
	ix, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	qv, err := lsa.Embed(ctx, queries, Query)
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	exact, err := ix.SearchExact(ctx, qv, 10)
	if err != nil {
		t.Fatal(err)
	}
	te := time.Since(start)
	start = time.Now()
	got, err := ix.SearchVectors(ctx, qv, 10)
	if err != nil {
		t.Fatal(err)
	}
	ti := time.Since(start)
	r := Recall(exact, got)
	m := ix.Meta()
	t.Logf("%d real passages, LSA dim %d, %d NQ-open dev queries: int8 recall@10 vs float32 exact %.4f (%d candidates re-scored); build with int8 form %.1fs; exact %.2fs, int8 %.2fs; int8 bytes/vector %.1f (%.3f per dimension)",
		len(docs), dim, len(queries), r, DefaultRescore, build.Seconds(), te.Seconds(), ti.Seconds(),
		float64(m.Files[codesFile].Size+m.Files[scalesU8].Size)/float64(m.Count), float64(m.Files[codesFile].Size+m.Files[scalesU8].Size)/float64(m.Count)/float64(dim))
	if r < 0.99 {
		t.Fatalf("int8 recall@10 %.4f < 0.99", r)
	}
}
