package methods_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/llm/offline"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/harness/retrieval/unitindex"
	"github.com/ragbench/ragbench/internal/testenv"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/metrics"
)

var umgMethods = []string{"umg", "umgp", "standard-rag", "hybrid", "longrag"}

// unitSetup is a corpus cut into units and indexed twice (BM25 and dense), opened as an Env.
type umgSetup struct {
	bm25, dense *unitindex.Index
}

func (s *umgSetup) env() methods.Env {
	r := s.bm25.Lean()
	for k, v := range s.dense.Lean() {
		r[k] = v
	}
	return methods.Env{Retrievers: r, Units: s.bm25.Table}
}

func (s *umgSetup) close() {
	s.bm25.Close()
	s.dense.Close()
}

// buildUnits indexes docs as units of 2, 4, 8, 16 and 32 sentences with BM25 and with emb (nil: LSA).
func umgBuild(t testing.TB, docs []corpus.PoolDoc, emb dense.Embedder) *umgSetup {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	for _, kind := range []string{"bm25", "dense"} {
		if err := unitindex.Build(ctx, docs, filepath.Join(dir, kind), unitindex.BuildOptions{Kind: kind, Embedder: emb}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := unitindex.Open(filepath.Join(dir, "bm25"), unitindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := unitindex.Open(filepath.Join(dir, "dense"), unitindex.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	if err := unitindex.SameUnits(b.Table, d.Table); err != nil {
		t.Fatal(err)
	}
	return &umgSetup{bm25: b, dense: d}
}

func umgReadDocs(t testing.TB, path string) []corpus.PoolDoc {
	t.Helper()
	r, err := corpus.Open(path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var docs []corpus.PoolDoc
	for {
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, corpus.PoolDoc{Document: d})
	}
	return docs
}

func umgDataset(t testing.TB, rel string, limit int) *datasets.Dataset {
	t.Helper()
	ds, err := datasets.Load(context.Background(), testenv.Data(t, rel), datasets.LoadOptions{Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// row is one method's end-to-end result on one dataset.
type umgRow struct {
	Method                    string
	F1, AnswerRecall, AR5     float64
	RetrievalP50, FusionP50   float64 // ms per question: inside retrieval calls, and the rest of the context step
	PreprocessP50, PreprocP95 float64
}

// runE2E answers every example with each method and the offline reader and returns the mean F1,
// answer recall (sub-EM) and AR@5, and the preprocessing times.
func umgRunE2E(t *testing.T, env methods.Env, exs []datasets.Example) []umgRow {
	t.Helper()
	ctx := context.Background()
	env.Generator = offline.New(offline.Options{})
	env.Prompts = umgPrompts(t)
	var out []umgRow
	for _, name := range umgMethods {
		m, err := methods.New(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := umgRow{Method: name}
		var pre, ret, fus []float64
		for _, ex := range exs {
			ienv, meter := methods.Instrument(env)
			p, err := m.Answer(ctx, ienv, ex)
			if err != nil {
				t.Fatalf("%s on %s: %v", name, ex.ID, err)
			}
			sc := metrics.NewGold(ex.Answers).Score(p.Answer)
			r.F1 += sc.F1
			r.AnswerRecall += sc.Acc
			r.AR5 += p.Signals["ar@5"]
			// Preprocessing: the context step alone, timed apart (the answer step includes the reader).
			ienv, meter = methods.Instrument(env)
			start := time.Now()
			if _, _, err := m.(methods.Contexter).Context(ctx, ienv, ex); err != nil {
				t.Fatal(err)
			}
			total := time.Since(start)
			rt := meter.Timings()[methods.StageRetrieval]
			pre = append(pre, umgMS(total))
			ret = append(ret, umgMS(rt))
			fus = append(fus, umgMS(total-rt))
		}
		n := float64(len(exs))
		r.F1, r.AnswerRecall, r.AR5 = r.F1/n, r.AnswerRecall/n, r.AR5/n
		r.PreprocessP50, r.PreprocP95 = umgPct(pre, .5), umgPct(pre, .95)
		r.RetrievalP50, r.FusionP50 = umgPct(ret, .5), umgPct(fus, .5)
		out = append(out, r)
	}
	return out
}

func umgMS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func umgPct(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func umgLogRows(t *testing.T, title string, rows []umgRow) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n| method | F1 | answer recall | AR@5 | preprocessing p50 ms | p95 ms | in retrieval p50 ms | fusion p50 ms |\n|---|---|---|---|---|---|---|---|\n", title)
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f | %.3f |\n", r.Method, r.F1, r.AnswerRecall, r.AR5, r.PreprocessP50, r.PreprocP95, r.RetrievalP50, r.FusionP50)
	}
	t.Log(b.String())
}

// TestUMGEndToEnd runs umg, umgp, standard-rag, hybrid and longrag with the offline reader, BM25 and
// LSA over units of the shared corpora: NQ-open over the NQ Wikipedia passages, nq_longdoc over its
// pages and HotpotQA (distractor) over its context pool. It checks that every method answers every
// question, that the multi-granularity methods find answers (AR@5 above a floor), and logs the
// figures of docs/umg.md.
func TestUMGEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end over the shared corpora: not in -short")
	}
	n := 200
	cases := []struct {
		name   string
		docs   func() []corpus.PoolDoc
		data   string
		minAR5 float64
	}{
		{"nq_open", func() []corpus.PoolDoc { return umgReadDocs(t, testenv.Data(t, "corpus/nq-wiki-passages.tsv")) },
			"nq_open/validation-00000-of-00001.parquet", 0.3},
		{"nq_longdoc", nil, "nq_longdoc/validation-00000-of-00001.parquet", 0.3},
		{"hotpotqa", nil, "hotpotqa/distractor/validation-00000-of-00001.parquet", 0.3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := umgDataset(t, c.data, n)
			var docs []corpus.PoolDoc
			if c.docs != nil {
				docs = c.docs()
			} else {
				all := umgDataset(t, c.data, 0)
				docs, _ = corpus.Pool(all.Examples)
			}
			start := time.Now()
			s := umgBuild(t, docs, nil)
			defer s.close()
			t.Logf("%s: %d documents cut and indexed (BM25 + LSA, 5 granularities) in %.1fs", c.name, len(docs), time.Since(start).Seconds())
			rows := umgRunE2E(t, s.env(), ds.Examples)
			umgLogRows(t, fmt.Sprintf("%s, first %d questions, offline reader", c.name, len(ds.Examples)), rows)
			for _, r := range rows {
				if (r.Method == "umg" || r.Method == "umgp") && r.AR5 < c.minAR5 {
					t.Errorf("%s: AR@5 %.3f below %.2f", r.Method, r.AR5, c.minAR5)
				}
			}
		})
	}
}

// embedServer is an in-process OpenAI-compatible /v1/embeddings server: each input gets a
// deterministic dim-dimensional vector from the hashes of its lower-cased words (a bag-of-words
// hashing embedding, a real if weak dense model). It counts requests.
type umgEmbedServer struct {
	dim   int
	mu    sync.Mutex
	calls int
}

func (e *umgEmbedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/embeddings" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Input []string `json:"input"`
		Model string   `json:"model"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	e.mu.Lock()
	e.calls++
	dim := e.dim
	e.mu.Unlock()
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	resp := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
		Usage  struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage"`
	}{Object: "list", Model: req.Model}
	for i, in := range req.Input {
		v := make([]float32, dim)
		for _, w := range strings.Fields(strings.ToLower(in)) {
			h := fnv.New64a()
			h.Write([]byte(strings.Trim(w, ".,;:!?\"'()")))
			x := h.Sum64()
			v[x%uint64(dim)] += 1
			v[(x>>32)%uint64(dim)] -= 0.5
		}
		resp.Data = append(resp.Data, item{Object: "embedding", Index: i, Embedding: v})
		resp.Usage.PromptTokens += len(strings.Fields(in))
	}
	resp.Usage.TotalTokens = resp.Usage.PromptTokens
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// TestUMGOpenAIEmbedder swaps the dense expert for an OpenAI-compatible embedder served in process:
// the dense retrievals change, the BM25 retrievals do not, and every method still answers. An
// embedder that starts returning vectors of another dimension is an error naming the expert and the
// dimensions.
func TestUMGOpenAIEmbedder(t *testing.T) {
	ctx := context.Background()
	all := umgDataset(t, "hotpotqa/distractor/validation-00000-of-00001.parquet", 0)
	docs, _ := corpus.Pool(all.Examples[:30])
	srv := &umgEmbedServer{dim: 64}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	emb, err := dense.NewOpenAI(ctx, dense.OpenAIConfig{BaseURL: ts.URL + "/v1", Model: "hash-64"})
	if err != nil {
		t.Fatal(err)
	}
	lsa := umgBuild(t, docs, nil)
	defer lsa.close()
	oai := umgBuild(t, docs, emb)
	defer oai.close()
	m, _ := methods.New("umg", nil)
	ex := all.Examples[3]
	retrieved := func(s *umgSetup) map[string][]string {
		env, meter := methods.Instrument(s.env())
		if _, _, err := m.(methods.Contexter).Context(ctx, env, ex); err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for _, r := range meter.Retrieved() {
			out[r.Retriever] = r.IDs
		}
		return out
	}
	a, b := retrieved(lsa), retrieved(oai)
	changed := 0
	for name, ids := range a {
		if strings.HasPrefix(name, "bm25@") && !slices.Equal(ids, b[name]) {
			t.Errorf("%s changed with the embedder", name)
		}
		if strings.HasPrefix(name, "dense@") && !slices.Equal(ids, b[name]) {
			changed++
		}
	}
	if changed == 0 {
		t.Errorf("no dense expert changed with the embedder")
	}
	if len(a) != 10 || len(b) != 10 {
		t.Errorf("pairs %d and %d, want 10", len(a), len(b))
	}
	// Every method answers with the OpenAI-compatible dense expert.
	env := oai.env()
	env.Generator = offline.New(offline.Options{})
	env.Prompts = umgPrompts(t)
	for _, name := range umgMethods {
		mm, _ := methods.New(name, nil)
		if _, err := mm.Answer(ctx, env, ex); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The server changes its dimension: the expert's error says so.
	srv.mu.Lock()
	srv.dim = 32
	srv.mu.Unlock()
	_, _, err = m.(methods.Contexter).Context(ctx, oai.env(), datasets.Example{Question: "a question never embedded before"})
	if err == nil || !strings.Contains(err.Error(), "expert dense@") || !strings.Contains(err.Error(), "32") {
		t.Errorf("wrong dimension: %v", err)
	}
}

// TestUMGBadDataset: a dataset without documents to cut into units is an error saying so.
func TestUMGBadDataset(t *testing.T) {
	ds := umgDataset(t, "nq_open/validation-00000-of-00001.parquet", 10)
	docs, _ := corpus.Pool(ds.Examples) // NQ-open ships no contexts
	err := unitindex.Build(context.Background(), docs, t.TempDir(), unitindex.BuildOptions{})
	if err == nil || !strings.Contains(err.Error(), "no documents to cut into units") {
		t.Errorf("NQ-open pool: %v", err)
	}
}

// replicate returns the corpus copied times over, the copies' ids suffixed "~c" (distinct ids, the
// same texts): the 10× corpus of the speed figures.
func umgReplicate(docs []corpus.PoolDoc, times int) []corpus.PoolDoc {
	out := make([]corpus.PoolDoc, 0, len(docs)*times)
	for c := 0; c < times; c++ {
		for _, d := range docs {
			if c > 0 {
				d.ID = fmt.Sprintf("%s~%d", d.ID, c)
			}
			out = append(out, d)
		}
	}
	return out
}

// TestUMGSpeed measures UMG's retrieval preprocessing per question (ten expert searches: BM25 and
// exact LSA dense search at five granularities, then fusion, ranking and selection) on the NQ
// passages and on ten copies of them, over 300 NQ-open questions, and checks the p50 bound of 50 ms on
// the shared corpus. Set UMG_SPEED=1 to run it:
//
//	UMG_SPEED=1 go test ./methods -run TestUMGSpeed -v -timeout 60m
func TestUMGSpeed(t *testing.T) {
	if testing.Short() || os.Getenv("UMG_SPEED") == "" {
		t.Skip("speed figures: set UMG_SPEED=1 (not in -short)")
	}
	base := umgReadDocs(t, testenv.Data(t, "corpus/nq-wiki-passages.tsv"))
	ds := umgDataset(t, "nq_open/validation-00000-of-00001.parquet", 300)
	for _, times := range []int{1, 10} {
		docs := umgReplicate(base, times)
		start := time.Now()
		s := umgBuild(t, docs, nil)
		build := time.Since(start)
		units := 0
		for _, g := range []int{2, 4, 8, 16, 32} {
			units += s.bm25.Table.Len(g)
		}
		for _, name := range []string{"umg", "umgp", "standard-rag", "hybrid", "longrag"} {
			m, _ := methods.New(name, nil)
			var pre, ret []float64
			for _, ex := range ds.Examples {
				env, meter := methods.Instrument(s.env())
				st := time.Now()
				if _, _, err := m.(methods.Contexter).Context(context.Background(), env, ex); err != nil {
					t.Fatal(err)
				}
				pre = append(pre, umgMS(time.Since(st)))
				ret = append(ret, umgMS(meter.Timings()[methods.StageRetrieval]))
			}
			t.Logf("%2d× corpus (%d passages, %d units, built in %.0fs): %-12s preprocessing p50 %.2f ms, p95 %.2f ms (in retrieval p50 %.2f ms)",
				times, len(docs), units, build.Seconds(), name, umgPct(pre, .5), umgPct(pre, .95), umgPct(ret, .5))
			// The bound holds on the shared corpus; ten copies measure the growth.
			if name == "umg" && times == 1 && umgPct(pre, .5) > 50 {
				t.Errorf("umg preprocessing p50 %.1f ms over 50 ms", umgPct(pre, .5))
			}
		}
		s.close()
	}
}

// TestUMGContextDeterministic: for every method on HotpotQA, the same question twice gives
// byte-identical contexts and traces (runner.EvalContexts' figures are checked in harness/runner).
func TestUMGContextDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds unit indexes over the HotpotQA pool: not in -short")
	}
	all := umgDataset(t, "hotpotqa/distractor/validation-00000-of-00001.parquet", 0)
	docs, _ := corpus.Pool(all.Examples)
	s := umgBuild(t, docs, nil)
	defer s.close()
	for _, name := range umgMethods {
		m, _ := methods.New(name, nil)
		for _, ex := range all.Examples[:10] {
			var out [2][]byte
			for i := range out {
				cu, tr, err := m.(methods.Contexter).Context(context.Background(), s.env(), ex)
				if err != nil {
					t.Fatal(err)
				}
				out[i], _ = json.Marshal([]any{cu, tr})
			}
			if string(out[0]) != string(out[1]) {
				t.Fatalf("%s: %s: two runs differ", name, ex.ID)
			}
		}
	}
}
