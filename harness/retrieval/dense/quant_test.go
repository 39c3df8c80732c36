package dense

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
)

func randomQueries(n, dim int, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 9))
	qs := make([][]float32, n)
	for i := range qs {
		qs[i] = make([]float32, dim)
		for j := range qs[i] {
			qs[i][j] = float32(rng.NormFloat64())
		}
	}
	return qs
}

// TestInt8RescoreAllIsExact: with every row re-scored, int8 search must return exactly the float32
// ranking (same rows, same scores up to summation order), whatever the padding of rows and dimensions.
func TestInt8RescoreAllIsExact(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n, dim, k int
		nq        int
	}{
		{"rows and dimensions on tile boundaries", 256, 32, 10, 16},
		{"ragged last block, dimension not a multiple of 4, ragged query group", 203, 27, 7, 11},
		{"fewer rows than one block", 5, 8, 10, 3},
		{"several row ranges and query batches", 3000, 16, 5, queryBatch + 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix, _ := buildIndex(t, randomDocs(tc.n, uint64(tc.n)), &tableEmbedder{dim: tc.dim}, BuildOptions{BatchSize: 37, Int8: true})
			if ok, _ := ix.Int8(); !ok {
				t.Fatal("index built with Int8 does not search int8")
			}
			ix.rescoreN = tc.n
			qs := randomQueries(tc.nq, tc.dim, 3)
			got, err := ix.SearchVectors(context.Background(), qs, tc.k)
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range qs {
				checkTopK(t, ix, q, got[i], tc.k)
			}
		})
	}
}

// TestInt8Recall: the int8 candidates, re-scored, find nearly all of the exact top 10 with the default
// number of candidates, on vectors with structure (clustered, as embeddings are).
func TestInt8Recall(t *testing.T) {
	const n, dim, k, nq = 20000, 64, 10, 50
	rng := rand.New(rand.NewPCG(4, 4))
	centres := randomQueries(50, dim, 11)
	emb := &tableEmbedder{dim: dim, vecs: map[string][]float32{}}
	docs := make([]corpus.Document, n)
	for i := range docs {
		c := centres[rng.IntN(len(centres))]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + 0.7*float32(rng.NormFloat64())
		}
		docs[i] = corpus.Document{ID: "d" + strconv.Itoa(i), Text: "doc " + strconv.Itoa(i)}
		emb.vecs[docs[i].Text] = v
	}
	ix, _ := buildIndex(t, docs, emb, BuildOptions{Int8: true})
	qs := randomQueries(nq, dim, 12)
	for i := range qs {
		c := centres[i%len(centres)]
		for j := range qs[i] {
			qs[i][j] = c[j] + 0.7*qs[i][j]
		}
	}
	exact, err := ix.SearchExact(context.Background(), qs, k)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ix.SearchVectors(context.Background(), qs, k)
	if err != nil {
		t.Fatal(err)
	}
	if r := Recall(exact, got); r < 0.99 {
		t.Fatalf("recall@%d %.4f < 0.99", k, r)
	} else {
		t.Logf("recall@%d %.4f with %d candidates, kernel %s", k, r, DefaultRescore, int8Kernel())
	}
}

func TestInt8FilesChecked(t *testing.T) {
	emb := &tableEmbedder{dim: 12}
	_, dir := buildIndex(t, randomDocs(100, 1), emb, BuildOptions{Int8: true})
	fi, err := os.Stat(filepath.Join(dir, codesFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 4*32*12 { // 100 rows → 4 blocks of 32 rows × 12 bytes
		t.Fatalf("vectors.u8 is %d bytes, want %d", fi.Size(), 4*32*12)
	}
	b, _ := os.ReadFile(filepath.Join(dir, codesFile))
	b[100] ^= 1
	os.WriteFile(filepath.Join(dir, codesFile), b, 0o644)
	if _, err := Open(dir, emb); err == nil || !strings.Contains(err.Error(), codesFile) {
		t.Fatalf("flipped byte in %s: err %v", codesFile, err)
	}
	os.WriteFile(filepath.Join(dir, codesFile), b[:len(b)-1], 0o644)
	if _, err := Open(dir, emb); err == nil || !strings.Contains(err.Error(), codesFile) {
		t.Fatalf("truncated %s: err %v", codesFile, err)
	}
}
