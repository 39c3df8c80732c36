package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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

// TestUMGConfigsOffline: configs/umg-hotpotqa.yaml and (with UMG_LONG=1) umg-nq.yaml run end to end
// with --offline (the offline reader, BM25 and LSA unit indexes in the experts' places) on 3
// questions, every cell answering without error; umg-nq in scope document over its 119 pages, whose
// LSA unit indexes take minutes to build, hence opt-in:
//
//	UMG_LONG=1 go test ./harness/runner -run TestUMGConfigsOffline -v -timeout 30m
func TestUMGConfigsOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds unit indexes: not in -short")
	}
	needData(t)
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"umg-nq.yaml", "umg-hotpotqa.yaml"} {
		t.Run(name, func(t *testing.T) {
			if name == "umg-nq.yaml" && os.Getenv("UMG_LONG") == "" {
				t.Skip("119 long pages: set UMG_LONG=1")
			}
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

// expertServers serves, in process, an OpenAI-compatible /v1/embeddings (hashed words, 32 dimensions)
// and text-embeddings-inference's /embed_sparse (hashed words into a vocabulary of 30522), both with
// the real APIs' JSON, and records the queries each saw.
func expertServers(t *testing.T) (embedURL, teiURL string, queries func() (dense, sparse []string)) {
	var mu sync.Mutex
	var dq, sq []string
	hash := func(w string, n uint32) uint32 {
		h := fnv.New32a()
		h.Write([]byte(strings.Trim(w, ".,?!()")))
		return h.Sum32() % n
	}
	emb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
			Model string   `json:"model"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"message":"bad request","type":"invalid_request_error"}}`))
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		out := map[string]any{"object": "list", "model": req.Model, "usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}}
		var data []item
		for i, in := range req.Input {
			if strings.HasPrefix(in, "Instruct: ") {
				mu.Lock()
				dq = append(dq, in)
				mu.Unlock()
			}
			v := make([]float32, 32)
			for _, word := range strings.Fields(strings.ToLower(in)) {
				v[hash(word, 32)]++
			}
			v[0] += 0.01
			data = append(data, item{Object: "embedding", Index: i, Embedding: v})
		}
		out["data"] = data
		json.NewEncoder(w).Encode(out)
	}))
	tei := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Inputs   []string `json:"inputs"`
			Truncate bool     `json:"truncate"`
		}
		if r.URL.Path != "/embed_sparse" || json.NewDecoder(r.Body).Decode(&req) != nil {
			w.WriteHeader(http.StatusUnprocessableEntity)
			w.Write([]byte(`{"error":"bad request","error_type":"Validation"}`))
			return
		}
		type entry struct {
			Index uint32  `json:"index"`
			Value float32 `json:"value"`
		}
		out := make([][]entry, len(req.Inputs))
		for i, in := range req.Inputs {
			if len(req.Inputs) == 1 {
				mu.Lock()
				sq = append(sq, in)
				mu.Unlock()
			}
			tf := map[uint32]float32{}
			for _, word := range strings.Fields(strings.ToLower(in)) {
				tf[hash(word, 30522)]++
			}
			out[i] = []entry{}
			for k, v := range tf {
				out[i] = append(out[i], entry{k, v})
			}
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(emb.Close)
	t.Cleanup(tei.Close)
	return emb.URL + "/v1", tei.URL, func() ([]string, []string) {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), dq...), append([]string(nil), sq...)
	}
}

// TestUMGRemoteExperts runs a UMG config with the paper's kinds of experts served in process: the
// dense expert through /v1/embeddings with Qwen3-Embedding's instruction before queries, the splade
// expert through TEI's /embed_sparse. Every method answers, the queries reach both servers (once per
// question and expert, whatever the number of granularities), and the retrievers are named by role.
func TestUMGRemoteExperts(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes a pool through two servers: not in -short")
	}
	needData(t)
	embURL, teiURL, queries := expertServers(t)
	t.Setenv("OPENAI_API_KEY", "sk-test")
	yaml := fmt.Sprintf(`name: umg-remote
index_cache: %s
datasets:
  - {name: hotpotqa, limit: 2, corpus: pool}
corpora:
  pool: {pool: hotpotqa}
methods:
  - {method: standard-rag, settings: {retrievers: [dense@8]}}
  - {method: hybrid, settings: {retrievers: [sparse@8, dense@8]}}
  - {method: longrag, settings: {retrievers: [dense@long]}}
  - {method: umg, settings: {experts: [sparse, dense]}}
  - {method: umgp, settings: {experts: [sparse, dense], scope: document}}
llm: {backend: offline}
retrieval:
  units:
    experts: [splade, dense]
    sizes: [2, 4, 8, 16, 32]
    dense: {base_url: %q, model: Qwen/Qwen3-Embedding-4B, preset: qwen3, dim: 32}
    sparse: {base_url: %q, model: naver/splade-v3}
`, t.TempDir(), embURL, teiURL)
	c, err := Parse("remote.yaml", []byte(yaml), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(context.Background(), c, Options{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors > 0 || res.Done != 10 {
		t.Fatalf("answered %d, failed %d", res.Done, res.Errors)
	}
	dq, sq := queries()
	// Two questions; the dense expert's queries carry the instruction, each sent once.
	if len(dq) != 2 || !strings.HasPrefix(dq[0], "Instruct: Given a web search query") || !strings.Contains(dq[0], "\nQuery:") {
		t.Errorf("dense queries %q: want 2, each with Qwen3-Embedding's instruction", dq)
	}
	if len(sq) != 2 {
		t.Errorf("sparse queries %q: want each of the 2 questions once", sq)
	}
}
