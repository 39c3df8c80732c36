package ngram

import (
	"context"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/text"
	"github.com/ragbench/ragbench/internal/testenv"
)

// TestRealCorpusCountsMatchScan builds an index over the NQ Wikipedia passages and checks entity counts
// and co-occurrences against a direct scan of the tokenized text.
func TestRealCorpusCountsMatchScan(t *testing.T) {
	path := testenv.Data(t, "corpus/nq-wiki-passages.tsv")
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "nq")
	st, err := Build(ctx, path, dir, BuildOptions{ShardTokens: 200000})
	if err != nil {
		t.Fatal(err)
	}
	if st.Shards < 2 {
		t.Fatalf("want several shards, got %d", st.Shards)
	}
	ix, err := OpenIndex(dir, OpenOptions{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()

	var docs [][]string
	if err := corpus.Each(ctx, path, "", func(d corpus.Document) error {
		docs = append(docs, text.Words(d.Text))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if uint64(len(docs)) != ix.NumDocs() {
		t.Fatalf("index has %d docs, corpus %d", ix.NumDocs(), len(docs))
	}
	entities := []string{"United States", "World War II", "the", "New York City", "Barack Obama",
		"National Football League", "India", "Harry Potter", "no such entity xyzzy"}
	rng := rand.New(rand.NewSource(11))
	for i := 0; i < 30; i++ { // and n-grams sampled from the text
		d := docs[rng.Intn(len(docs))]
		if len(d) < 4 {
			continue
		}
		j := rng.Intn(len(d) - 3)
		entities = append(entities, strings.Join(d[j:j+1+rng.Intn(3)], " "))
	}
	for _, e := range entities {
		want := uint64(len(bruteOcc(docs, text.Words(e))))
		got, err := ix.Count(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		if got.Count != want {
			t.Errorf("Count(%q) = %d, scan finds %d", e, got.Count, want)
		}
	}
	pairs := [][2]string{{"United States", "President"}, {"World War II", "Germany"}, {"India", "India"}, {"Harry Potter", "Rowling"}}
	for _, p := range pairs {
		want := bruteCooc(docs, text.Words(p[0]), text.Words(p[1]), 1000)
		got, err := ix.CoOccur(ctx, p[0], p[1], 1000)
		if err != nil {
			t.Fatal(err)
		}
		if got.Count != want {
			t.Errorf("CoOccur(%q, %q, 1000) = %d, scan finds %d", p[0], p[1], got.Count, want)
		}
	}
}

// TestParquetCorpus builds from a parquet text column (the long NQ documents, a nested column) and
// checks counts against a scan.
func TestParquetCorpus(t *testing.T) {
	path := testenv.Data(t, "nq_longdoc/validation-00000-of-00001.parquet")
	ctx := context.Background()
	r, err := corpus.OpenParquet(path, corpus.ParquetColumns{Text: "document.text", Title: "document.title"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dir := filepath.Join(t.TempDir(), "pq")
	if _, err := BuildFrom(ctx, r, dir, BuildOptions{Lowercase: true}); err != nil {
		t.Fatal(err)
	}
	ix, err := OpenIndex(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	r2, _ := corpus.OpenParquet(path, corpus.ParquetColumns{Text: "document.text"})
	defer r2.Close()
	var docs [][]string
	for {
		d, err := r2.Next()
		if err != nil {
			break
		}
		docs = append(docs, text.Words(strings.ToLower(d.Text)))
	}
	for _, q := range []string{"the", "united states", "< p >", "Wikipedia"} {
		want := uint64(len(bruteOcc(docs, text.Words(strings.ToLower(q)))))
		got, err := ix.Count(ctx, q)
		if err != nil || got.Count != want || want == 0 {
			t.Errorf("Count(%q) = %d (%v), scan %d", q, got.Count, err, want)
		}
	}
}
