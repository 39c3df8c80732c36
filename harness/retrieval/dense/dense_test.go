package dense

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
)

// tableEmbedder returns fixed vectors: texts found in vecs get theirs, others a hash-seeded random one.
type tableEmbedder struct {
	dim   int
	vecs  map[string][]float32
	calls atomic.Int64
}

func (e *tableEmbedder) Dim() int { return e.dim }
func (e *tableEmbedder) Embed(ctx context.Context, texts []string, kind Kind) ([][]float32, error) {
	e.calls.Add(1)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if v, ok := e.vecs[t]; ok {
			out[i] = append([]float32(nil), v...)
			continue
		}
		h := fnv.New64a()
		h.Write([]byte(t))
		rng := rand.New(rand.NewPCG(h.Sum64(), 7))
		v := make([]float32, e.dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		out[i] = v
	}
	return out, nil
}

func randomDocs(n int, seed uint64) []corpus.Document {
	rng := rand.New(rand.NewPCG(seed, 1))
	docs := make([]corpus.Document, n)
	for i := range docs {
		docs[i] = corpus.Document{ID: "d" + strconv.Itoa(i), Title: "t" + strconv.Itoa(rng.IntN(1000)), Text: "text " + strconv.Itoa(rng.IntN(1_000_000))}
	}
	return docs
}

func buildIndex(t *testing.T, docs []corpus.Document, emb Embedder, opt BuildOptions) (*Index, string) {
	t.Helper()
	dir := t.TempDir()
	if err := BuildWith(context.Background(), corpus.NewSliceReader(docs), emb, dir, io.Discard, opt); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(dir, emb)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix, dir
}

// bruteForce scores in float64 and sorts all rows.
func bruteForce(ix *Index, q []float32) []Result {
	v := append([]float32(nil), q...)
	normalize(v)
	out := make([]Result, ix.Len())
	for i := range out {
		var s float64
		for j, x := range ix.Vector(i) {
			s += float64(x) * float64(v[j])
		}
		out[i] = Result{Row: i, Score: float32(s)}
	}
	sort.Slice(out, func(i, j int) bool { return worse(out[j], out[i]) })
	return out
}

// checkTopK verifies got against the brute-force ranking: the right length, scores within tol of the
// true scores, non-increasing, and no omitted row scoring clearly above the k-th.
func checkTopK(t *testing.T, ix *Index, q []float32, got []Result, k int) {
	t.Helper()
	const tol = 1e-5
	bf := bruteForce(ix, q)
	want := min(k, len(bf))
	if len(got) != want {
		t.Fatalf("got %d results, want %d", len(got), want)
	}
	truth := map[int]float32{}
	for _, r := range bf {
		truth[r.Row] = r.Score
	}
	in := map[int]bool{}
	for i, r := range got {
		if d := math.Abs(float64(r.Score - truth[r.Row])); d > tol {
			t.Fatalf("rank %d row %d: score %v, brute force %v", i, r.Row, r.Score, truth[r.Row])
		}
		if i > 0 && r.Score > got[i-1].Score {
			t.Fatalf("rank %d: scores not sorted", i)
		}
		in[r.Row] = true
	}
	kth := got[len(got)-1].Score
	for _, r := range bf[:want] {
		if !in[r.Row] && r.Score > kth+tol {
			t.Fatalf("row %d (score %v) missing, k-th score %v", r.Row, r.Score, kth)
		}
	}
}

func TestSearchMatchesBruteForce(t *testing.T) {
	for _, tc := range []struct {
		name          string
		n, dim, block int
		k, nq         int
	}{
		{"single block", 300, 16, 8192, 10, 7},
		{"several blocks with a ragged last block, split over row ranges", 1000, 24, 64, 25, 33},
		{"k above the corpus size returns every row", 40, 8, 16, 100, 3},
		{"k of 1", 500, 32, 100, 1, 20},
		{"more queries than one Sgemm batch", 200, 8, 64, 5, queryBatch + 17},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix, _ := buildIndex(t, randomDocs(tc.n, uint64(tc.n)), &tableEmbedder{dim: tc.dim}, BuildOptions{BatchSize: 50})
			ix.maxRows = tc.block
			rng := rand.New(rand.NewPCG(uint64(tc.nq), 2))
			qs := make([][]float32, tc.nq)
			for i := range qs {
				qs[i] = make([]float32, tc.dim)
				for j := range qs[i] {
					qs[i][j] = float32(rng.NormFloat64())
				}
			}
			got, err := ix.SearchVectors(context.Background(), qs, tc.k)
			if err != nil {
				t.Fatal(err)
			}
			naive, err := ix.SearchNaive(qs, tc.k)
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range qs {
				checkTopK(t, ix, q, got[i], tc.k)
				checkTopK(t, ix, q, naive[i], tc.k)
			}
		})
	}
}

func TestTiesGoToLowerRow(t *testing.T) {
	// Every document gets the same vector: the ranking must be by row.
	docs := randomDocs(50, 3)
	emb := &tableEmbedder{dim: 4, vecs: map[string][]float32{}}
	for _, d := range docs {
		emb.vecs[passageText(d)] = []float32{1, 2, 3, 4}
	}
	ix, _ := buildIndex(t, docs, emb, BuildOptions{})
	ix.maxRows = 3 // several row ranges, so ties also cross the merge of the ranges' top k
	res, err := ix.SearchVectors(context.Background(), [][]float32{{1, 2, 3, 4}}, 5)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res[0] {
		if r.Row != i {
			t.Fatalf("rank %d is row %d, want %d: %v", i, r.Row, i, res[0])
		}
	}
}

func TestRetrieveReturnsDocuments(t *testing.T) {
	docs := []corpus.Document{
		{ID: "a", Title: "Alpha", Text: "first"},
		{ID: "b", Title: "", Text: "second"},
		{ID: "c", Title: "Gamma", Text: "third\twith tab and ünïcode"},
	}
	emb := &tableEmbedder{dim: 3, vecs: map[string][]float32{
		"Alpha first":                       {1, 0, 0},
		"second":                            {0, 2, 0},
		"Gamma third\twith tab and ünïcode": {0, 0, 3},
		"find b":                            {0.1, 1, 0},
	}}
	ix, _ := buildIndex(t, docs, emb, BuildOptions{BatchSize: 2})
	hits, err := ix.Retrieve(context.Background(), "find b", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].ID != "b" || hits[0].Text != "second" || hits[0].Rank != 1 || hits[1].ID != "a" || hits[1].Title != "Alpha" {
		t.Fatalf("hits %+v", hits)
	}
	if math.Abs(hits[0].Score-1/math.Sqrt(1.01)) > 1e-6 {
		t.Fatalf("score %v, want cosine %v", hits[0].Score, 1/math.Sqrt(1.01))
	}
	for i := range docs {
		d, err := ix.Doc(i)
		if err != nil || d != docs[i] {
			t.Fatalf("doc %d: %+v %v", i, d, err)
		}
	}
}

func TestBuildBadInput(t *testing.T) {
	cases := []struct {
		name    string
		docs    []corpus.Document
		emb     Embedder
		wantErr string
	}{
		{"duplicate ids are an error naming the id", []corpus.Document{{ID: "x", Text: "a"}, {ID: "y", Text: "b"}, {ID: "x", Text: "c"}}, &tableEmbedder{dim: 4}, `duplicate document id "x"`},
		{"a wrong-sized vector is an error", []corpus.Document{{ID: "x", Text: "a"}}, &tableEmbedder{dim: 2, vecs: map[string][]float32{"a": {1, 2, 3}}}, "dimension mismatch"},
		{"NaN in a vector is an error", []corpus.Document{{ID: "x", Text: "a"}}, &tableEmbedder{dim: 2, vecs: map[string][]float32{"a": {float32(math.NaN()), 1}}}, "NaN"},
		{"no embedder", []corpus.Document{{ID: "x", Text: "a"}}, nil, "no embedder"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var emb Embedder
			if tc.emb != nil {
				emb = tc.emb
			}
			err := Build(context.Background(), corpus.NewSliceReader(tc.docs), emb, t.TempDir(), nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestEmptyDocumentsAndZeroQueries(t *testing.T) {
	docs := []corpus.Document{{ID: "empty"}, {ID: "z", Text: "zero"}, {ID: "ok", Text: "fine"}}
	emb := &tableEmbedder{dim: 2, vecs: map[string][]float32{"zero": {0, 0}, "fine": {1, 1}, "nothing": {0, 0}}}
	ix, _ := buildIndex(t, docs, emb, BuildOptions{})
	if m := ix.Meta(); m.Empty != 1 || m.Zero != 1 || m.Count != 3 {
		t.Fatalf("meta %+v", m)
	}
	if emb.calls.Load() != 1 {
		t.Fatalf("embedder called %d times", emb.calls.Load())
	}
	hits, err := ix.Retrieve(context.Background(), "nothing", 3)
	if err != nil || len(hits) != 0 {
		t.Fatalf("zero query: hits %v err %v, want none", hits, err)
	}
	hits, err = ix.Retrieve(context.Background(), "fine", 3)
	if err != nil || len(hits) != 3 || hits[0].ID != "ok" || hits[1].Score != 0 {
		t.Fatalf("hits %+v err %v", hits, err)
	}
}

func TestOpenDetectsCorruption(t *testing.T) {
	emb := &tableEmbedder{dim: 8}
	cases := []struct {
		name    string
		corrupt func(dir string) error
		wantErr string
	}{
		{"a flipped byte in the vectors", func(dir string) error { return flip(filepath.Join(dir, vectorsFile), 100) }, "checksum"},
		{"a flipped byte in the documents", func(dir string) error { return flip(filepath.Join(dir, docsFile), 5) }, "checksum"},
		{"truncated vectors", func(dir string) error { return os.Truncate(filepath.Join(dir, vectorsFile), 64) }, "truncated or corrupt"},
		{"missing meta.json", func(dir string) error { return os.Remove(filepath.Join(dir, metaFile)) }, "meta.json"},
		{"garbled meta.json", func(dir string) error { return os.WriteFile(filepath.Join(dir, metaFile), []byte("{"), 0o644) }, "meta.json"},
		{"wrong dimension for the embedder", func(dir string) error { emb.dim = 9; return nil }, "dimension"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			emb.dim = 8
			dir := t.TempDir()
			if err := Build(context.Background(), corpus.NewSliceReader(randomDocs(30, 1)), emb, dir, nil); err != nil {
				t.Fatal(err)
			}
			if err := tc.corrupt(dir); err != nil {
				t.Fatal(err)
			}
			ix, err := Open(dir, emb)
			if err == nil {
				ix.Close()
				t.Fatalf("open succeeded, want error %q", tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func flip(path string, at int64) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if at >= int64(len(b)) {
		return errors.New("file too short to corrupt")
	}
	b[at] ^= 0x40
	return os.WriteFile(path, b, 0o644)
}

func TestVectorsAreNormalisedOnDisk(t *testing.T) {
	ix, dir := buildIndex(t, randomDocs(20, 9), &tableEmbedder{dim: 5}, BuildOptions{})
	b, err := os.ReadFile(filepath.Join(dir, vectorsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 20*5*4 {
		t.Fatalf("vectors.f32 is %d bytes", len(b))
	}
	for i := 0; i < 20; i++ {
		var s float64
		for j := 0; j < 5; j++ {
			x := math.Float32frombits(binary.LittleEndian.Uint32(b[(i*5+j)*4:]))
			s += float64(x) * float64(x)
		}
		if math.Abs(s-1) > 1e-5 {
			t.Fatalf("row %d has squared norm %v", i, s)
		}
	}
	_ = ix
}

func TestEmptyCorpusAndCancel(t *testing.T) {
	ix, _ := buildIndex(t, nil, &tableEmbedder{dim: 3}, BuildOptions{})
	if ix.Len() != 0 {
		t.Fatalf("len %d", ix.Len())
	}
	hits, err := ix.Retrieve(context.Background(), "anything", 5)
	if err != nil || len(hits) != 0 {
		t.Fatalf("empty index: %v %v", hits, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Build(ctx, corpus.NewSliceReader(randomDocs(10, 1)), &tableEmbedder{dim: 3}, t.TempDir(), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled build: %v", err)
	}
	if _, err := ix.SearchVectors(context.Background(), [][]float32{{1, 2}}, 3); err == nil && ix.Len() > 0 {
		t.Fatal("wrong query dimension accepted")
	}
}

func TestConcurrentSearch(t *testing.T) {
	ix, _ := buildIndex(t, randomDocs(500, 5), &tableEmbedder{dim: 8}, BuildOptions{})
	ix.maxRows = 64
	want, err := ix.SearchBatch(context.Background(), []string{"q1", "q2"}, 5)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := ix.SearchBatch(context.Background(), []string{"q1", "q2"}, 5)
			if err != nil {
				errs <- err
				return
			}
			for i := range got {
				for j := range got[i] {
					if got[i][j] != want[i][j] {
						errs <- errors.New("concurrent search returned a different result")
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestBlankQueriesSkipTheEmbedder(t *testing.T) {
	emb := &tableEmbedder{dim: 4}
	ix, _ := buildIndex(t, randomDocs(20, 2), emb, BuildOptions{})
	before := emb.calls.Load()
	res, err := ix.SearchBatch(context.Background(), []string{"", "  ", "real"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || len(res[0]) != 0 || len(res[1]) != 0 || len(res[2]) != 3 {
		t.Fatalf("results %v", res)
	}
	if emb.calls.Load() != before+1 {
		t.Fatal("embedder not called exactly once")
	}
	hits, err := ix.Retrieve(context.Background(), "", 3)
	if err != nil || hits == nil || len(hits) != 0 || emb.calls.Load() != before+1 {
		t.Fatalf("blank Retrieve: %v %v", hits, err)
	}
}
