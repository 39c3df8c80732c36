package dense

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"io"
	"net"
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

const testKey = "sk-test-SECRET-0123456789"

// fakeServer serves /v1/embeddings. Each request pops the next scripted reply (status and body file);
// when the script is empty it answers with deterministic 4-dimensional embeddings of the inputs.
type fakeServer struct {
	t      *testing.T
	mu     sync.Mutex
	script []reply
	inputs [][]string
	auth   []string
	delay  time.Duration
}

type reply struct {
	status int
	file   string
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/embeddings" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Input []string `json:"input"`
		Model string   `json:"model"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		f.t.Errorf("bad request body %s: %v", body, err)
	}
	f.mu.Lock()
	f.inputs = append(f.inputs, req.Input)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	var rep *reply
	if len(f.script) > 0 {
		rep = &f.script[0]
		f.script = f.script[1:]
	}
	delay := f.delay
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if rep != nil {
		b, err := os.ReadFile(filepath.Join("testdata", "openai", rep.file))
		if err != nil {
			f.t.Fatal(err)
		}
		w.WriteHeader(rep.status)
		w.Write(b)
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	resp := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{Object: "list", Model: req.Model}
	for i, s := range req.Input {
		resp.Data = append(resp.Data, item{"embedding", i, fakeVec(s)})
	}
	json.NewEncoder(w).Encode(resp)
}

func fakeVec(s string) []float32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	x := h.Sum32()
	return []float32{float32(x & 0xff), float32(x >> 8 & 0xff), float32(x >> 16 & 0xff), float32(len(s))}
}

func newFake(t *testing.T, script ...reply) (*fakeServer, string) {
	f := &fakeServer{t: t, script: script}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL + "/v1"
}

func testConfig(url string) OpenAIConfig {
	return OpenAIConfig{BaseURL: url, APIKey: testKey, Model: "test-model", Dim: 4, Backoff: time.Millisecond, MaxRetries: 3}
}

func TestOpenAIParsesRecordedResponses(t *testing.T) {
	want := [][]float32{{0.0023064255, -0.009327292, 0.015797347, -0.0077780345}, {-0.0065131276, 0.011274532, 0.0045829965, 0.0169844}}
	for _, file := range []string{"openai_ok.json", "tei_ok.json", "vllm_ok.json"} {
		t.Run(file, func(t *testing.T) {
			f, url := newFake(t, reply{200, file})
			e, err := NewOpenAI(context.Background(), testConfig(url))
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Embed(context.Background(), []string{"a", "b"}, Passage)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				for j := range want[i] {
					if got[i][j] != want[i][j] {
						t.Fatalf("vector %d: %v, want %v (index order must be honoured)", i, got[i], want[i])
					}
				}
			}
			if f.auth[0] != "Bearer "+testKey {
				t.Fatalf("authorization header %q", f.auth[0])
			}
		})
	}
}

func TestOpenAIErrors(t *testing.T) {
	cases := []struct {
		name     string
		script   []reply
		ok       bool
		requests int
		wantErr  string
	}{
		{"429 then success is retried", []reply{{429, "openai_429.json"}}, true, 2, ""},
		{"TEI 503 twice then success is retried", []reply{{503, "tei_503.json"}, {503, "tei_503.json"}}, true, 3, ""},
		{"persistent 503 gives up with the server's message", []reply{{503, "tei_503.json"}, {503, "tei_503.json"}, {503, "tei_503.json"}, {503, "tei_503.json"}}, false, 4, "giving up after 4 attempts"},
		{"401 is not retried", []reply{{401, "openai_401.json"}}, false, 1, "Incorrect API key"},
		{"vLLM 400 is not retried", []reply{{400, "vllm_400.json"}}, false, 1, "maximum context length"},
		{"TEI 413 is not retried", []reply{{413, "tei_413.json"}}, false, 1, "must have less than 512 tokens"},
		{"a response of the wrong dimension is an error", []reply{{200, "openai_ok.json"}}, false, 1, "dimensions"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, url := newFake(t, tc.script...)
			cfg := testConfig(url)
			texts := []string{"x", "y"}
			if strings.Contains(tc.name, "wrong dimension") {
				cfg.Dim = 3
			}
			e, err := NewOpenAI(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Embed(context.Background(), texts, Query)
			if tc.ok != (err == nil) {
				t.Fatalf("err %v, want ok=%v", err, tc.ok)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %q, want it to contain %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), testKey) {
					t.Fatalf("the API key leaked into the error: %v", err)
				}
			}
			if got := int(e.Requests.Load()); got != tc.requests || len(f.inputs) != tc.requests {
				t.Fatalf("%d requests (server saw %d), want %d", got, len(f.inputs), tc.requests)
			}
		})
	}
}

func TestOpenAITimeoutIsRetriedThenReported(t *testing.T) {
	f, url := newFake(t)
	f.delay = 200 * time.Millisecond
	cfg := testConfig(url)
	cfg.Timeout = 20 * time.Millisecond
	cfg.MaxRetries = 2
	e, err := NewOpenAI(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Embed(context.Background(), []string{"slow"}, Passage)
	if err == nil || !strings.Contains(err.Error(), "giving up after 3 attempts") || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("err %v", err)
	}
}

func TestOpenAIPrefixesBatchesAndCache(t *testing.T) {
	f, url := newFake(t)
	cfg := testConfig(url)
	cfg.Preset = PresetE5
	cfg.BatchSize = 2
	cfg.CacheDir = t.TempDir()
	ctx := context.Background()
	e, err := NewOpenAI(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"one", "two", "three"}
	first, err := e.Embed(ctx, texts, Passage)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.inputs) != 2 || len(f.inputs[0]) != 2 || len(f.inputs[1]) != 1 {
		t.Fatalf("batches %v, want 2+1", f.inputs)
	}
	if f.inputs[0][0] != "passage: one" {
		t.Fatalf("passage prefix not applied: %q", f.inputs[0][0])
	}
	if _, err := e.Embed(ctx, []string{"one"}, Query); err != nil {
		t.Fatal(err)
	}
	if last := f.inputs[len(f.inputs)-1]; last[0] != "query: one" {
		t.Fatalf("query prefix not applied (and the passage cache must not answer a query): %q", last[0])
	}
	e.Close()

	// A new embedder on the same cache directory answers from disk without a request.
	n := len(f.inputs)
	e2, err := NewOpenAI(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e2.Embed(ctx, texts, Passage)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.inputs) != n || e2.Cached.Load() != 3 {
		t.Fatalf("cache missed: %d new requests, %d cached", len(f.inputs)-n, e2.Cached.Load())
	}
	for i := range first {
		for j := range first[i] {
			if first[i][j] != again[i][j] {
				t.Fatalf("cached vector %d differs", i)
			}
		}
	}
	e2.Close()

	// No file in the cache directory holds the key.
	filepath.Walk(cfg.CacheDir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			if strings.Contains(string(b), testKey) {
				t.Errorf("%s contains the API key", p)
			}
		}
		return nil
	})

	// Another model does not share the cache.
	cfg.Model = "other-model"
	e3, err := NewOpenAI(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e3.Close()
	if _, err := e3.Embed(ctx, texts[:1], Passage); err != nil {
		t.Fatal(err)
	}
	if e3.Cached.Load() != 0 {
		t.Fatal("a different model was served from the first model's cache")
	}
}

func TestCacheCutsATornRecord(t *testing.T) {
	dir := t.TempDir()
	c, err := OpenCache(dir, "ns", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Put("", "a", []float32{1, 2})
	c.Put("", "b", []float32{3, 4})
	c.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*.emb"))
	st, _ := os.Stat(files[0])
	os.Truncate(files[0], st.Size()-3) // a crash in the middle of the second record
	c, err = OpenCache(dir, "ns", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Len() != 1 || c.Dropped == 0 {
		t.Fatalf("len %d dropped %d, want 1 record kept and the torn one dropped", c.Len(), c.Dropped)
	}
	if v, ok, err := c.Get("", "a"); !ok || err != nil || v[1] != 2 {
		t.Fatalf("get a: %v %v %v", v, ok, err)
	}
	if _, ok, _ := c.Get("", "b"); ok {
		t.Fatal("torn record b still served")
	}
	// Appending after the cut works.
	if err := c.Put("", "b", []float32{5, 6}); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := c.Get("", "b"); !ok || v[0] != 5 {
		t.Fatalf("get b after re-put: %v %v", v, ok)
	}
}

func TestOpenAIDimensionProbeAndEnv(t *testing.T) {
	f, url := newFake(t)
	t.Setenv("OPENAI_BASE_URL", url)
	t.Setenv("OPENAI_API_KEY", testKey)
	e, err := NewOpenAI(context.Background(), OpenAIConfig{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Dim() != 4 || len(f.inputs) != 1 || f.auth[0] != "Bearer "+testKey {
		t.Fatalf("dim %d after %d requests, auth %q", e.Dim(), len(f.inputs), f.auth)
	}
	if d := e.Describe(); strings.Contains(strings.Join([]string{d["base_url"], d["model"]}, " "), testKey) {
		t.Fatal("key in description")
	}
	if _, err := NewOpenAI(context.Background(), OpenAIConfig{}); err == nil {
		t.Fatal("no model accepted")
	}
	if _, err := NewOpenAI(context.Background(), OpenAIConfig{Model: "m", Dim: 4, Preset: "nope"}); err == nil {
		t.Fatal("unknown preset accepted")
	}
}

func TestPrefixes(t *testing.T) {
	for _, tc := range []struct{ preset, q, p string }{
		{"", "", ""},
		{"e5", "query: ", "passage: "},
		{"bge", "Represent this sentence for searching relevant passages: ", ""},
		{"qwen3", "Instruct: " + DefaultQwen3Task + "\nQuery:", ""},
	} {
		q, p, err := Prefixes(tc.preset, "")
		if err != nil || q != tc.q || p != tc.p {
			t.Errorf("preset %q: %q %q %v", tc.preset, q, p, err)
		}
	}
}

func TestSanitizeURL(t *testing.T) {
	if got := sanitizeURL("https://user:pw@host/v1/?api-key=zzz#f"); got != "https://host/v1" {
		t.Fatalf("got %q", got)
	}
}

func TestBuildCorpusAndReopenFromMeta(t *testing.T) {
	f, url := newFake(t)
	t.Setenv("OPENAI_API_KEY", testKey)
	t.Setenv("OPENAI_BASE_URL", "")
	ctx := context.Background()
	open := func() (corpus.Reader, error) { return corpus.NewSliceReader(topicDocs), nil }
	dir := t.TempDir()
	spec := EmbedderSpec{Kind: KindOpenAI, OpenAI: OpenAIConfig{BaseURL: url, Model: "m", Dim: 4, Preset: PresetE5}}
	if err := BuildCorpus(ctx, open, spec, dir, nil); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(dir, nil)
	if err != nil {
		t.Fatalf("reopen from meta.json: %v", err)
	}
	defer ix.Close()
	n := len(f.inputs)
	if _, err := ix.Retrieve(ctx, "moon", 2); err != nil {
		t.Fatal(err)
	}
	if got := f.inputs[n][0]; got != "query: moon" {
		t.Fatalf("reopened embedder sent %q", got)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "meta.json"))
	if strings.Contains(string(b), testKey) {
		t.Fatal("key in meta.json")
	}
	// LSA through the same entry point.
	dir2 := t.TempDir()
	if err := BuildCorpus(ctx, open, EmbedderSpec{LSA: LSAConfig{Dim: 3, MinDF: 1}}, dir2, nil); err != nil {
		t.Fatal(err)
	}
	ix2, err := Open(dir2, nil)
	if err != nil {
		t.Fatal(err)
	}
	ix2.Close()
	if err := BuildCorpus(ctx, open, EmbedderSpec{Kind: "bert"}, t.TempDir(), nil); err == nil {
		t.Fatal("unknown kind accepted")
	}
}

func TestOpenAIConcurrentBatches(t *testing.T) {
	f, url := newFake(t)
	f.delay = 5 * time.Millisecond
	cfg := testConfig(url)
	cfg.BatchSize = 2
	cfg.Concurrency = 3
	cfg.CacheDir = t.TempDir()
	e, err := NewOpenAI(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var texts []string
	for i := 0; i < 7; i++ {
		texts = append(texts, "text "+strings.Repeat("x", i))
	}
	got, err := e.Embed(context.Background(), texts, Passage)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range texts {
		want := fakeVec(s)
		for j := range want {
			if got[i][j] != want[j] {
				t.Fatalf("text %d got %v want %v: results out of order", i, got[i], want)
			}
		}
	}
	if n := len(f.inputs); n != 4 {
		t.Fatalf("%d requests, want 4", n)
	}
	if e.cache.Len() != 7 {
		t.Fatalf("cache holds %d", e.cache.Len())
	}
	// One failing batch fails the call.
	f2, url2 := newFake(t, reply{400, "vllm_400.json"})
	cfg2 := testConfig(url2)
	cfg2.BatchSize, cfg2.Concurrency = 1, 4
	e2, _ := NewOpenAI(context.Background(), cfg2)
	if _, err := e2.Embed(context.Background(), []string{"a", "b", "c", "d", "e"}, Query); err == nil || !strings.Contains(err.Error(), "maximum context length") {
		t.Fatalf("err %v", err)
	}
	_ = f2
}

// TestOpenAIRefusedLocalPortIsNotRetried: a refused loopback port cannot succeed on a retry; the
// failure is immediate and no retry is reported, while a timeout's retries are reported.
func TestOpenAIRefusedLocalPortIsNotRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	retries := 0
	cfg := testConfig("http://" + addr + "/v1")
	cfg.OnRetry = func(string, int, error, time.Duration) { retries++ }
	e, err := NewOpenAI(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"x"}, Passage); err == nil || retries != 0 || e.Requests.Load() != 1 {
		t.Fatalf("err %v, %d retries, %d requests; want one failed request", err, retries, e.Requests.Load())
	}

	f, url := newFake(t)
	f.delay = 200 * time.Millisecond
	cfg = testConfig(url)
	cfg.Timeout, cfg.MaxRetries = 20*time.Millisecond, 2
	cfg.OnRetry = func(string, int, error, time.Duration) { retries++ }
	e, err = NewOpenAI(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"slow"}, Passage); err == nil || retries != 2 {
		t.Fatalf("timeouts: err %v, %d retries reported, want 2", err, retries)
	}
}
