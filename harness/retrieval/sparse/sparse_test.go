package sparse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/corpus"
)

// teiServer answers POST /embed_sparse as text-embeddings-inference does: a list of
// [{"index", "value"}] per input, or TEI's error JSON. Its "model" hashes lower-cased words into
// vocab entries with weight 1 + log(tf).
type teiServer struct {
	mu       sync.Mutex
	vocab    int
	maxBatch int
	requests int
	fail     []int // statuses to answer first, one per request
	outside  bool  // answer an index equal to vocab
	short    bool  // answer one vector too few
}

func fakeSplade(text string, vocab int) []Entry {
	tf := map[uint32]int{}
	for _, w := range strings.Fields(strings.ToLower(text)) {
		w = strings.Trim(w, ".,?!")
		if w == "" {
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		tf[h.Sum32()%uint32(vocab)]++
	}
	var out []Entry
	for i, n := range tf {
		out = append(out, Entry{Index: i, Value: float32(1 + math.Log(float64(n)))})
	}
	return out
}

func (s *teiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	tei := func(status int, typ, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": msg, "error_type": typ})
	}
	if r.Method != http.MethodPost || r.URL.Path != "/embed_sparse" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	var req struct {
		Inputs   []string `json:"inputs"`
		Truncate *bool    `json:"truncate"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Truncate == nil {
		tei(http.StatusUnprocessableEntity, "Validation", fmt.Sprintf("bad request: %v", err))
		return
	}
	if len(s.fail) > 0 {
		st := s.fail[0]
		s.fail = s.fail[1:]
		switch st {
		case http.StatusTooManyRequests:
			tei(st, "Overloaded", "Model is overloaded")
		case http.StatusFailedDependency:
			tei(st, "Backend", "`/embed_sparse` is only available for models with a sparse embedding head")
		default:
			tei(st, "Validation", "input validation error")
		}
		return
	}
	if s.maxBatch > 0 && len(req.Inputs) > s.maxBatch {
		tei(http.StatusRequestEntityTooLarge, "Validation", fmt.Sprintf("batch size %d > maximum allowed batch size %d", len(req.Inputs), s.maxBatch))
		return
	}
	out := make([][]Entry, 0, len(req.Inputs))
	for _, in := range req.Inputs {
		out = append(out, fakeSplade(in, s.vocab))
	}
	if s.outside && len(out) > 0 {
		out[0] = append(out[0], Entry{Index: uint32(s.vocab), Value: 0.5})
	}
	if s.short {
		out = out[:len(out)-1]
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

func newTEI(t *testing.T, s *teiServer, cfg Config) *TEI {
	t.Helper()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	cfg.BaseURL = ts.URL
	if cfg.Vocab == 0 {
		cfg.Vocab = s.vocab
	}
	cfg.Backoff = time.Millisecond
	c, err := NewTEI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestTEI checks the client against TEI's JSON: vectors sorted and checked, batches within the
// server's limit, retries of 429, and each error case with a message that says what is wrong.
func TestTEI(t *testing.T) {
	ctx := context.Background()
	srv := &teiServer{vocab: 1000, maxBatch: 4}
	c := newTEI(t, srv, Config{BatchSize: 4})
	texts := []string{"The castle stood by the river.", "river river castle", "", "a b c d", "violin"}
	vs, err := c.Encode(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) || srv.requests != 2 {
		t.Fatalf("%d vectors in %d requests", len(vs), srv.requests)
	}
	for i, v := range vs {
		want, _ := Check(fakeSplade(texts[i], 1000), 1000, "want")
		if len(v) != len(want) {
			t.Fatalf("vector %d: %v, want %v", i, v, want)
		}
		for j := range v {
			if v[j] != want[j] || (j > 0 && v[j-1].Index >= v[j].Index) {
				t.Fatalf("vector %d: %v, want %v (sorted)", i, v, want)
			}
		}
	}
	cases := []struct {
		srv  *teiServer
		cfg  Config
		want []string
		why  string
	}{
		{&teiServer{vocab: 1000, fail: []int{429, 429}}, Config{}, nil, "429 Overloaded is retried"},
		{&teiServer{vocab: 1000, fail: []int{429, 429}}, Config{MaxRetries: 1}, []string{"429", "Overloaded", "Model is overloaded"}, "retries run out"},
		{&teiServer{vocab: 1000, fail: []int{424}}, Config{}, []string{"424", "Backend", "SPLADE"}, "a model without a sparse head"},
		{&teiServer{vocab: 1000, maxBatch: 2}, Config{BatchSize: 3}, []string{"413", "maximum allowed batch size 2"}, "a batch over the server's limit"},
		{&teiServer{vocab: 1000, fail: []int{422}}, Config{}, []string{"422", "Validation"}, "validation errors are not retried"},
		{&teiServer{vocab: 1000, outside: true}, Config{}, []string{"vocabulary", "index 1000", "1000 entries", "vector 1 of"}, "an index outside the declared vocabulary"},
		{&teiServer{vocab: 1000}, Config{Vocab: 500}, []string{"vocabulary", "500 entries"}, "a server with a larger vocabulary than declared"},
		{&teiServer{vocab: 1000, short: true}, Config{}, []string{"2 vectors for 3 inputs"}, "a vector missing"},
	}
	for _, tc := range cases {
		c := newTEI(t, tc.srv, tc.cfg)
		_, err := c.Encode(ctx, []string{"castle river", "violin bow", "comet tail"})
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.why, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: no error", tc.why)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tc.why, err, w)
			}
		}
	}
	if _, err := NewTEI(Config{}); err == nil {
		t.Error("no base URL: no error")
	}
}

// TestTEICache: encodings are cached by server, model and text; a second client over the same cache
// directory asks the server nothing for texts it has seen, and gets the same vectors.
func TestTEICache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	srv := &teiServer{vocab: 1000}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	open := func(model string) *TEI {
		c, err := NewTEI(Config{BaseURL: ts.URL, Vocab: 1000, CacheDir: dir, Model: model})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	texts := []string{"castle river castle", "", "violin"}
	a := open("m")
	va, err := a.Encode(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	n := srv.requests
	b := open("m")
	vb, err := b.Encode(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	if srv.requests != n || b.Cached.Load() != 3 {
		t.Fatalf("cached client made %d requests, served %d from the cache", srv.requests-n, b.Cached.Load())
	}
	for i := range va {
		if fmt.Sprint(va[i]) != fmt.Sprint(vb[i]) {
			t.Fatalf("vector %d: %v from the server, %v from the cache", i, va[i], vb[i])
		}
	}
	c := open("other-model")
	defer c.Close()
	if _, err := c.Encode(ctx, texts[:1]); err != nil || srv.requests != n+1 {
		t.Fatalf("another model must not share the cache: %d requests, %v", srv.requests-n, err)
	}
}

// randomEncoder gives documents random sparse vectors from a seeded generator, by text.
type randomEncoder struct{ vocab int }

func (e randomEncoder) Vocab() int { return e.vocab }
func (e randomEncoder) Encode(_ context.Context, texts []string) ([]Vector, error) {
	out := make([]Vector, len(texts))
	for i, s := range texts {
		h := fnv.New64a()
		h.Write([]byte(s))
		rng := rand.New(rand.NewSource(int64(h.Sum64())))
		seen := map[uint32]bool{}
		for j := rng.Intn(12); j > 0; j-- {
			idx := uint32(rng.Intn(e.vocab))
			if !seen[idx] {
				seen[idx] = true
				// Coarse weights, so that ties happen.
				out[i] = append(out[i], Entry{Index: idx, Value: float32(rng.Intn(4))})
			}
		}
	}
	return out, nil
}

// TestIndexBruteForce: the inverted index's top k equals scoring every document (ids, order with ties
// to the lower row, scores), and SearchRows equals the brute force restricted to the rows.
func TestIndexBruteForce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var docs []corpus.Document
	for i := 0; i < 500; i++ {
		docs = append(docs, corpus.Document{ID: fmt.Sprintf("d%d", i), Text: fmt.Sprintf("document %d", i)})
	}
	enc := randomEncoder{vocab: 60}
	if err := Build(ctx, corpus.NewSliceReader(docs), enc, dir, nil); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(dir, enc)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Len() != 500 {
		t.Fatalf("%d documents", ix.Len())
	}
	for qi := 0; qi < 200; qi++ {
		qs, _ := enc.Encode(ctx, []string{fmt.Sprintf("query %d", qi)})
		q, _ := Check(qs[0], 60, "q")
		for _, k := range []int{1, 7, 100, 1000} {
			got, want := ix.Search(q, k), ix.BruteForce(q, k)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("query %d k %d:\n got %v\nwant %v", qi, k, got, want)
			}
		}
		rows := []int32{3, 50, 51, 52, 200, 499}
		var want []Result
		for _, r := range ix.BruteForce(q, 1000) {
			for _, x := range rows {
				if int32(r.Row) == x && len(want) < 3 {
					want = append(want, r)
				}
			}
		}
		if got := ix.SearchRows(q, 3, rows); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("rows: got %v, want %v", got, want)
		}
	}
	hits, err := ix.Retrieve(ctx, "query 3", 5)
	if err != nil || len(hits) == 0 || hits[0].Rank != 1 || !strings.HasPrefix(hits[0].ID, "d") {
		t.Fatalf("retrieve: %v %v", hits, err)
	}
}

// TestIndexBadInput: an encoder returning an index outside its vocabulary fails the build naming the
// document; a damaged vectors file, or an encoder of another vocabulary size, fails Open.
func TestIndexBadInput(t *testing.T) {
	ctx := context.Background()
	docs := []corpus.Document{{ID: "a", Text: "castle"}, {ID: "b", Text: "river"}}
	srv := &teiServer{vocab: 1000}
	c := newTEI(t, srv, Config{Vocab: 100}) // declares 100, the model hashes into 1000
	err := Build(ctx, corpus.NewSliceReader(docs), c, t.TempDir(), nil)
	if !errors.Is(err, ErrVocab) {
		t.Fatalf("out-of-vocabulary build: %v", err)
	}
	dir := t.TempDir()
	good := newTEI(t, &teiServer{vocab: 1000}, Config{})
	if err := Build(ctx, corpus.NewSliceReader(docs), good, dir, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, randomEncoder{vocab: 999}); err == nil || !strings.Contains(err.Error(), "999") {
		t.Fatalf("vocabulary mismatch: %v", err)
	}
	vf := filepath.Join(dir, fileVectors)
	b, _ := os.ReadFile(vf)
	b[len(b)-1] ^= 0xff
	os.WriteFile(vf, b, 0o644)
	if _, err := Open(dir, good); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("damaged vectors: %v", err)
	}
}
