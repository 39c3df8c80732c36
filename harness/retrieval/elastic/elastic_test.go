package elastic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/query_golden.json from the query the client sends")

// fakeES replays recorded Elasticsearch answers. Scripted replies (status, testdata file) are served
// first, in order; then GET / answers ping_es8.json, PUT /index create_ok.json, _search search_ok.json,
// _msearch msearch_ok.json, and _bulk stores the documents and answers like Elasticsearch 8.
type fakeES struct {
	t        *testing.T
	mu       sync.Mutex
	script   []reply
	requests []recorded
	docs     map[string]map[string]string
	indexed  int             // documents received by _bulk (with repeats)
	reject   map[string]int  // _bulk: reject this id with es_rejected_execution this many times
	bad      map[string]bool // _bulk: fail this id with a mapping error
	delay    time.Duration
}

type reply struct {
	status int
	file   string
}

type recorded struct {
	method, path, query, body, auth string
}

// reqs returns a copy of the requests seen so far.
func (f *fakeES) reqs() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

func newFakeES(t *testing.T, script ...reply) (*fakeES, Config) {
	f := &fakeES{t: t, script: script, docs: map[string]map[string]string{}, reject: map[string]int{}, bad: map[string]bool{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	t.Setenv("ELASTIC_URL", "")
	t.Setenv("ELASTIC_API_KEY", "")
	t.Setenv("ELASTIC_USERNAME", "")
	t.Setenv("ELASTIC_PASSWORD", "")
	return f, Config{URL: srv.URL, Backoff: time.Millisecond, MaxRetries: 3, Timeout: 5 * time.Second}
}

func readFileNoT(name string) ([]byte, error) { return os.ReadFile(filepath.Join("testdata", name)) }

func readFile(t *testing.T, name string) []byte {
	b, err := readFileNoT(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fakeES) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, recorded{r.Method, r.URL.Path, r.URL.RawQuery, string(body), r.Header.Get("Authorization")})
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
		w.WriteHeader(rep.status)
		w.Write(readFile(f.t, rep.file))
		return
	}
	switch {
	case r.Method == "GET" && r.URL.Path == "/":
		w.Write(readFile(f.t, "ping_es8.json"))
	case r.Method == "PUT":
		w.Write(readFile(f.t, "create_ok.json"))
	case strings.HasSuffix(r.URL.Path, "/_search"):
		w.Write(readFile(f.t, "search_ok.json"))
	case r.URL.Path == "/_msearch":
		w.Write(readFile(f.t, "msearch_ok.json"))
	case r.URL.Path == "/_bulk":
		f.bulk(w, body)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeES) bulk(w http.ResponseWriter, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<24)
	type item struct {
		ID     string          `json:"_id"`
		Status int             `json:"status"`
		Error  json.RawMessage `json:"error,omitempty"`
	}
	var items []map[string]item
	errs := false
	for sc.Scan() {
		var action struct {
			Index struct {
				Index string `json:"_index"`
				ID    string `json:"_id"`
			} `json:"index"`
		}
		if err := json.Unmarshal(sc.Bytes(), &action); err != nil {
			f.t.Errorf("bad bulk action %q", sc.Text())
			return
		}
		if !sc.Scan() {
			f.t.Error("bulk action without a source line")
			return
		}
		var src map[string]string
		if err := json.Unmarshal(sc.Bytes(), &src); err != nil {
			f.t.Errorf("bad bulk source %q", sc.Text())
			return
		}
		id := action.Index.ID
		switch {
		case f.reject[id] > 0:
			f.reject[id]--
			errs = true
			items = append(items, map[string]item{"index": {id, 429, readFile(f.t, "bulk_item_rejected.json")}})
		case f.bad[id]:
			errs = true
			items = append(items, map[string]item{"index": {id, 400, readFile(f.t, "bulk_item_mapping.json")}})
		default:
			f.docs[id] = src
			f.indexed++
			items = append(items, map[string]item{"index": {id, 201, nil}})
		}
	}
	json.NewEncoder(w).Encode(map[string]any{"took": 30, "errors": errs, "items": items})
}

func TestQueryIsDRAGINs(t *testing.T) {
	f, cfg := newFakeES(t)
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := c.Retrieve(context.Background(), "who sang does he love you with reba", 3)
	if err != nil {
		t.Fatal(err)
	}
	req := f.reqs()[0]
	if req.method != "POST" || req.path != "/wiki/_search" || req.query != "search_type=dfs_query_then_fetch" {
		t.Fatalf("request %s %s?%s", req.method, req.path, req.query)
	}
	var got, want any
	json.Unmarshal([]byte(req.body), &got)
	if *update {
		b, _ := json.Marshal(got)
		if err := os.WriteFile(filepath.Join("testdata", "query_golden.json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	json.Unmarshal(readFile(t, "query_golden.json"), &want)
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if !bytes.Equal(gb, wb) {
		t.Fatalf("query body\n%s\nwant\n%s", gb, wb)
	}
	if len(hits) != 2 || hits[0].ID != "11828866" || hits[0].Rank != 1 || hits[0].Score != 31.207445 ||
		hits[0].Title != "Does He Love You" || !strings.HasPrefix(hits[0].Text, `"Does He Love You" is a song`) {
		t.Fatalf("hits %+v", hits)
	}
	if strings.HasPrefix(hits[1].Text, hits[1].Title) {
		t.Fatalf("text must come without its title: %q", hits[1].Text)
	}
}

func TestLeftTruncate(t *testing.T) {
	long := strings.Repeat("w ", 70) + "last words here"
	cases := []struct {
		name, in string
		n        int
		want     string
	}{
		{"short queries are untouched", "Who is  Reba?", 64, "Who is  Reba?"},
		{"the last n tokens are kept", "a b c d e", 2, "d e"},
		{"punctuation tokens count", "x, y. z", 3, "y. z"},
		{"cut at the first kept token keeps inner spacing", "one  two   three", 2, "two   three"},
		{"64 of 73 tokens", long, 64, strings.Repeat("w ", 61) + "last words here"},
		{"negative keeps everything", "a b c", -1, "a b c"},
		{"zero keeps nothing", "a b c", 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := LeftTruncate(tc.in, tc.n); got != tc.want {
				t.Fatalf("got %q want %q", got, tc.want)
			}
		})
	}
}

func TestTruncationIsApplied(t *testing.T) {
	f, cfg := newFakeES(t)
	c, _ := New(cfg)
	q := strings.Repeat("filler ", 100) + "final"
	if _, err := c.Retrieve(context.Background(), q, 1); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Query struct {
			MultiMatch struct {
				Query string `json:"query"`
			} `json:"multi_match"`
		} `json:"query"`
	}
	json.Unmarshal([]byte(f.reqs()[0].body), &body)
	if got := body.Query.MultiMatch.Query; got != strings.Repeat("filler ", 63)+"final" {
		t.Fatalf("sent %q", got)
	}
	// A query with no token is answered locally with no hits.
	hits, err := c.Retrieve(context.Background(), "   ", 5)
	if err != nil || len(hits) != 0 || len(f.reqs()) != 1 {
		t.Fatalf("empty query: %v %v, %d requests", hits, err, len(f.reqs()))
	}
}

func TestErrorsAndRetries(t *testing.T) {
	cases := []struct {
		name     string
		script   []reply
		ok       bool
		requests int
		wantErr  string
	}{
		{"404 index_not_found is reported at once", []reply{{404, "error_index_not_found.json"}}, false, 1, "index_not_found_exception: no such index [wiki]"},
		{"400 parsing_exception is reported at once", []reply{{400, "error_400_parse.json"}}, false, 1, "parsing_exception"},
		{"429 then success is retried", []reply{{429, "error_429.json"}}, true, 2, ""},
		{"503 twice then success is retried", []reply{{503, "error_503.json"}, {503, "error_503.json"}}, true, 3, ""},
		{"persistent 503 gives up", []reply{{503, "error_503.json"}, {503, "error_503.json"}, {503, "error_503.json"}, {503, "error_503.json"}}, false, 4, "giving up after 4 attempts"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, cfg := newFakeES(t, tc.script...)
			c, _ := New(cfg)
			_, err := c.Retrieve(context.Background(), "q", 3)
			if tc.ok != (err == nil) {
				t.Fatalf("err %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %q, want %q", err, tc.wantErr)
			}
			if len(f.reqs()) != tc.requests {
				t.Fatalf("%d requests, want %d", len(f.reqs()), tc.requests)
			}
		})
	}
}

func TestTimeoutIsRetriedThenReported(t *testing.T) {
	f, cfg := newFakeES(t)
	f.delay = 300 * time.Millisecond
	cfg.Timeout = 20 * time.Millisecond
	cfg.MaxRetries = 2
	c, _ := New(cfg)
	_, err := c.Retrieve(context.Background(), "q", 3)
	if err == nil || !strings.Contains(err.Error(), "giving up after 3 attempts") || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("err %v", err)
	}
	if len(f.reqs()) != 3 {
		t.Fatalf("%d requests", len(f.reqs()))
	}
}

func TestSearchBatch(t *testing.T) {
	f, cfg := newFakeES(t)
	c, _ := New(cfg)
	res, err := c.SearchBatch(context.Background(), []string{"reba", "", "nothing"}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || len(res[0]) != 1 || res[0][0].ID != "11828866" || len(res[1]) != 0 || len(res[2]) != 0 {
		t.Fatalf("results %+v", res)
	}
	lines := strings.Split(strings.TrimSpace(f.reqs()[0].body), "\n")
	if len(lines) != 4 || lines[0] != `{"index":"wiki","search_type":"dfs_query_then_fetch"}` {
		t.Fatalf("msearch body %q", f.reqs()[0].body)
	}
	f.script = []reply{{200, "msearch_item_error.json"}}
	_, err = c.SearchBatch(context.Background(), []string{"a", "b"}, 5)
	if err == nil || !strings.Contains(err.Error(), `query 1 ("b")`) || !strings.Contains(err.Error(), "maxClauseCount") {
		t.Fatalf("err %v", err)
	}
}

func TestPing(t *testing.T) {
	for _, tc := range []struct{ file, dist, version string }{
		{"ping_es8.json", "elasticsearch", "8.11.1"},
		{"ping_opensearch.json", "opensearch", "2.11.0"},
	} {
		_, cfg := newFakeES(t, reply{200, tc.file})
		c, _ := New(cfg)
		info, err := c.Ping(context.Background())
		if err != nil || info.Distribution != tc.dist || info.Version != tc.version {
			t.Fatalf("%s: %+v %v", tc.file, info, err)
		}
	}
}

func TestCredentialsComeFromTheEnvironment(t *testing.T) {
	f, cfg := newFakeES(t, reply{401, "error_400_parse.json"})
	t.Setenv("ELASTIC_USERNAME", "elastic")
	t.Setenv("ELASTIC_PASSWORD", "hunter2-secret")
	c, _ := New(cfg)
	_, err := c.Ping(context.Background())
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err %v", err)
	}
	if f.reqs()[0].auth != "Basic ZWxhc3RpYzpodW50ZXIyLXNlY3JldA==" {
		t.Fatalf("auth %q", f.reqs()[0].auth)
	}
	if _, err := New(Config{URL: "http://u:p@host:9200"}); err == nil || strings.Contains(err.Error(), "u:p") {
		t.Fatalf("credentials in the URL: %v", err)
	}
	if _, err := New(Config{URL: "localhost:9200"}); err == nil {
		t.Fatal("URL without a scheme accepted")
	}
}

func writeTSV(t *testing.T, n int) string {
	var b strings.Builder
	b.WriteString("id\ttext\ttitle\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\t\"passage \"\"%d\"\" text\"\tTitle %d\n", i, i, i)
	}
	p := filepath.Join(t.TempDir(), "psgs.tsv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIndexTSVResumes(t *testing.T) {
	f, cfg := newFakeES(t)
	cfg.BulkDocs = 3
	tsv := writeTSV(t, 10)
	cp := filepath.Join(t.TempDir(), "cp.json")
	ctx := context.Background()
	// A bad document in the third batch stops the first run after two batches.
	f.bad["8"] = true
	var progress bytes.Buffer
	err := IndexTSVWith(ctx, cfg, tsv, &progress, IndexOptions{Checkpoint: cp, Create: true})
	if err == nil || !strings.Contains(err.Error(), `document "8"`) || !strings.Contains(err.Error(), "document_parsing_exception") {
		t.Fatalf("err %v", err)
	}
	var c Checkpoint
	b, _ := os.ReadFile(cp)
	json.Unmarshal(b, &c)
	if c.Line != 7 || c.ID != "6" || c.Docs != 6 {
		t.Fatalf("checkpoint %+v", c)
	}
	// Resume: only lines after the checkpoint are sent, and the run completes.
	delete(f.bad, "8")
	f.indexed = 0
	progress.Reset()
	if err := IndexTSVWith(ctx, cfg, tsv, &progress, IndexOptions{Checkpoint: cp}); err != nil {
		t.Fatal(err)
	}
	if f.indexed != 4 || len(f.docs) != 10 {
		t.Fatalf("resumed run sent %d documents, %d stored", f.indexed, len(f.docs))
	}
	if !strings.Contains(progress.String(), "resuming after line 7") {
		t.Fatalf("progress %q", progress.String())
	}
	if d := f.docs["3"]; d["txt"] != `passage "3" text` || d["title"] != "Title 3" {
		t.Fatalf("doc 3 %v", d)
	}
	// A third run has nothing to do.
	f.indexed = 0
	if err := IndexTSVWith(ctx, cfg, tsv, nil, IndexOptions{Checkpoint: cp}); err != nil || f.indexed != 0 {
		t.Fatalf("rerun: %v, %d sent", err, f.indexed)
	}
	// A changed file does not match the checkpoint.
	os.WriteFile(tsv, []byte("id\ttext\ttitle\n1\tx\ty\n"), 0o644)
	if err := IndexTSVWith(ctx, cfg, tsv, nil, IndexOptions{Checkpoint: cp}); err == nil || !strings.Contains(err.Error(), "--restart") {
		t.Fatalf("changed file: %v", err)
	}
	if err := IndexTSVWith(ctx, cfg, tsv, nil, IndexOptions{Checkpoint: cp, Restart: true}); err != nil {
		t.Fatal(err)
	}
}

func TestIndexTSVRetriesRejectedItems(t *testing.T) {
	f, cfg := newFakeES(t)
	cfg.BulkDocs = 4
	f.reject["2"] = 2
	tsv := writeTSV(t, 5)
	if err := IndexTSVWith(context.Background(), cfg, tsv, nil, IndexOptions{Checkpoint: filepath.Join(t.TempDir(), "cp")}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for id := range f.docs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if strings.Join(ids, ",") != "1,2,3,4,5" {
		t.Fatalf("stored %v", ids)
	}
	// Rejected for longer than the retries allow: a clear error.
	f2, cfg2 := newFakeES(t)
	f2.reject["1"] = 100
	err := IndexTSVWith(context.Background(), cfg2, tsv, nil, IndexOptions{Checkpoint: filepath.Join(t.TempDir(), "cp")})
	if err == nil || !strings.Contains(err.Error(), "still rejected") {
		t.Fatalf("err %v", err)
	}
}

func TestIndexTSVBadLines(t *testing.T) {
	for _, tc := range []struct{ name, content, want string }{
		{"two fields", "id\ttext\ttitle\n1\tonly text\n", "psgs.tsv:2: want 3 tab-separated fields"},
		{"empty id", "id\ttext\ttitle\n\tt\tx\n", "field id is empty"},
		{"bad UTF-8", "id\ttext\ttitle\n1\t\xff\tx\n", "not valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cfg := newFakeES(t)
			p := filepath.Join(t.TempDir(), "psgs.tsv")
			os.WriteFile(p, []byte(tc.content), 0o644)
			err := IndexTSVWith(context.Background(), cfg, p, nil, IndexOptions{Checkpoint: p + ".cp"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestCreateIndex(t *testing.T) {
	f, cfg := newFakeES(t, reply{400, "create_exists.json"}, reply{400, "create_exists.json"})
	c, _ := New(cfg)
	if err := c.CreateIndex(context.Background(), true); err != nil {
		t.Fatalf("existing index with ifMissing: %v", err)
	}
	if err := c.CreateIndex(context.Background(), false); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("err %v", err)
	}
	var m map[string]any
	json.Unmarshal([]byte(f.reqs()[0].body), &m)
	if fmt.Sprint(m) != "map[mappings:map[properties:map[title:map[analyzer:english type:text] txt:map[analyzer:english type:text]]]]" {
		t.Fatalf("mapping %v", m)
	}
}
