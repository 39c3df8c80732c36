package ngram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func post(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("response is not JSON: %q", data)
	}
	return res.StatusCode, out
}

func TestServerMatchesLibrary(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(9))
	docs := randomDocs(rng, 40, 30, 3)
	ix, _ := buildDocs(t, joinDocs(docs), BuildOptions{ShardTokens: 200})
	for _, mode := range []Mode{Exact, InfiniGram} {
		srv := &Server{Index: ix, Name: "test", Mode: mode}
		ts := httptest.NewServer(srv.Handler())
		client := &Client{URL: ts.URL, Index: "test", MaxClauseFreq: 500000}
		for i := 0; i < 30; i++ {
			q := strings.Join(randQuery(rng, 3, 3), " ")
			code, out := post(t, ts.URL, fmt.Sprintf(`{"index":"test","query_type":"count","query":%q}`, q))
			want, _ := ix.Count(ctx, q)
			if code != 200 || uint64(out["count"].(float64)) != want.Count {
				t.Fatalf("%s: server count of %q = %d %v, library %d", mode, q, code, out, want.Count)
			}
			a, b := strings.Join(randQuery(rng, 3, 2), " "), strings.Join(randQuery(rng, 3, 2), " ")
			w := 1 + rng.Intn(10)
			got, err := client.CoOccur(ctx, a, b, w)
			if err != nil {
				t.Fatal(err)
			}
			var lib Result
			if mode == Exact {
				lib, _ = ix.CoOccur(ctx, a, b, w)
			} else {
				lib, _ = Compat{Index: ix, MaxClauseFreq: 500000}.CoOccur(ctx, a, b, w)
			}
			if got != lib {
				t.Fatalf("%s: client CoOccur(%q, %q, %d) = %+v, library %+v", mode, a, b, w, got, lib)
			}
		}
		// ids queries, prob and ntd
		ids := mustIDs(t, ix, "a b")
		code, out := post(t, ts.URL, fmt.Sprintf(`{"index":"test","query_type":"count","query_ids":[%d,%d]}`, ids[0], ids[1]))
		if code != 200 || uint64(out["count"].(float64)) != ix.CountIDs(ids) {
			t.Fatalf("query_ids count: %d %v", code, out)
		}
		code, out = post(t, ts.URL, `{"index":"test","query_type":"ntd","query":"a"}`)
		if code != 200 || uint64(out["prompt_cnt"].(float64)) != ix.CountIDs(ids[:1]) {
			t.Fatalf("ntd: %d %v", code, out)
		}
		code, out = post(t, ts.URL, `{"index":"test","query_type":"prob","query":"a b"}`)
		if p, _, _ := ix.Prob(ids[:1], ids[1]); code != 200 || out["prob"].(float64) != p {
			t.Fatalf("prob: %d %v, want %v", code, out, p)
		}
		ts.Close()
	}
}

func TestServerBadRequests(t *testing.T) {
	ix, _ := buildDocs(t, []string{"a b c", "a b"}, BuildOptions{})
	srv := &Server{Index: ix, Name: "test", MaxBody: 4096}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	cases := []struct {
		name, body string
		code       int
	}{
		{"not JSON", `{"index":`, 400},
		{"missing query_type", `{"index":"test","query":"a"}`, 400},
		{"unknown index", `{"index":"other","query_type":"count","query":"a"}`, 400},
		{"unknown query_type", `{"index":"test","query_type":"search_docs","query":"a"}`, 400},
		{"both query and query_ids", `{"index":"test","query_type":"count","query":"a","query_ids":[1]}`, 400},
		{"neither query nor query_ids", `{"index":"test","query_type":"count"}`, 400},
		{"query_ids of the wrong shape", `{"index":"test","query_type":"count","query_ids":[[1]]}`, 400},
		{"id out of range", `{"index":"test","query_type":"count","query_ids":[99999]}`, 400},
		{"max_diff_tokens out of range", `{"index":"test","query_type":"count","query":"a AND b","max_diff_tokens":0}`, 400},
		{"max_clause_freq wrong type", `{"index":"test","query_type":"count","query":"a AND b","max_clause_freq":"x"}`, 400},
		{"too many clauses", `{"index":"test","query_type":"count","query":"a AND a AND a AND a AND a"}`, 400},
		{"over-long query", fmt.Sprintf(`{"index":"test","query_type":"count","query":%q}`, strings.Repeat("a", 1001)), 400},
		{"request too large", fmt.Sprintf(`{"index":"test","query_type":"count","query":%q}`, strings.Repeat("a ", 3000)), 413},
		{"unknown token is a count of 0", `{"index":"test","query_type":"count","query":"zzz"}`, 200},
	}
	for _, tc := range cases {
		code, out := post(t, ts.URL, tc.body)
		if code != tc.code {
			t.Errorf("%s: HTTP %d %v, want %d", tc.name, code, out, tc.code)
		}
		if tc.code != 200 {
			if _, ok := out["error"].(string); !ok {
				t.Errorf("%s: no error field in %v", tc.name, out)
			}
		} else if out["count"].(float64) != 0 {
			t.Errorf("%s: %v", tc.name, out)
		}
	}
	// Overload: with every slot taken the server answers 429 at once.
	for i := 0; i < cap(srv.sem); i++ {
		srv.sem <- struct{}{}
	}
	if code, _ := post(t, ts.URL, `{"index":"test","query_type":"count","query":"a"}`); code != 429 {
		t.Errorf("overloaded: HTTP %d, want 429", code)
	}
	for i := 0; i < cap(srv.sem); i++ {
		<-srv.sem
	}
	// Deadline: a query past its deadline gets 503.
	srv.Timeout = time.Nanosecond
	if code, _ := post(t, ts.URL, `{"index":"test","query_type":"count","query":"a AND b"}`); code != 503 {
		t.Errorf("past the deadline: HTTP %d, want 503", code)
	}
}

func TestClientRetriesAndErrors(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		var req Request
		json.NewDecoder(r.Body).Decode(&req)
		switch {
		case req.Query == "flaky" && n <= 2:
			w.WriteHeader(503)
			w.Write([]byte(`{"error":"busy"}`))
		case req.Query == "limited" && n == 1:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(429)
			w.Write([]byte(`{"error":"slow down"}`))
		case req.Query == "bad":
			w.Write([]byte(`{"error":"Please limit your input to <= 500 tokens!"}`)) // HTTP 200
		case req.Query == "refused":
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"[Flask] Invalid index"}`))
		default:
			fmt.Fprintf(w, `{"count": 42, "approx": %v, "latency": 1.5, "token_ids": [1], "tokens": ["x"]}`, strings.Contains(req.Query, "AND"))
		}
	}))
	defer ts.Close()
	c := &Client{URL: ts.URL, Backoff: time.Millisecond}
	cases := []struct {
		q         string
		wantErr   bool
		wantCalls int32
	}{
		{"flaky", false, 3},
		{"limited", false, 2},
		{"bad", true, 1},
		{"refused", true, 1},
		{"fine", false, 1},
	}
	for _, tc := range cases {
		calls.Store(0)
		r, err := c.Count(ctx, tc.q)
		if (err != nil) != tc.wantErr || calls.Load() != tc.wantCalls {
			t.Errorf("%s: result %+v err %v after %d calls; want error %v after %d", tc.q, r, err, calls.Load(), tc.wantErr, tc.wantCalls)
		}
		if err == nil && r.Count != 42 {
			t.Errorf("%s: count %d", tc.q, r.Count)
		}
		var ae *APIError
		if tc.wantErr && !errors.As(err, &ae) {
			t.Errorf("%s: error %v is not an APIError", tc.q, err)
		}
	}
	r, err := c.CoOccur(ctx, "a", "b", 1000)
	if err != nil || !r.Approx {
		t.Fatalf("CoOccur: %+v %v", r, err)
	}
}

type countingCounter struct{ calls int }

func (c *countingCounter) Count(ctx context.Context, q string) (Result, error) {
	c.calls++
	return Result{Count: uint64(len(q))}, nil
}
func (c *countingCounter) CoOccur(ctx context.Context, a, b string, w int) (Result, error) {
	c.calls++
	return Result{Count: uint64(len(a) + len(b) + w), Approx: true}, nil
}

func TestCachePersistsAndReplays(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cache.jsonl")
	inner := &countingCounter{}
	c, err := OpenCache(path, inner, "idx", "")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if r, _ := c.Count(ctx, "Barack Obama"); r.Count != 12 {
			t.Fatalf("count %d", r.Count)
		}
		if r, _ := c.CoOccur(ctx, "a", "bb", 10); r.Count != 13 || !r.Approx {
			t.Fatalf("cooc %+v", r)
		}
	}
	if inner.calls != 2 {
		t.Fatalf("inner asked %d times, want 2", inner.calls)
	}
	c.Close()
	// A torn final line (a crash mid-write) is ignored; the rest replays offline.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte(`{"key": "{\"args\"`))
	f.Close()
	off, err := OpenCache(path, nil, "idx", "")
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if off.Skipped != 1 || off.Len() != 2 {
		t.Fatalf("reloaded %d entries, skipped %d", off.Len(), off.Skipped)
	}
	if r, err := off.CoOccur(ctx, "a", "bb", 10); err != nil || r.Count != 13 {
		t.Fatalf("replay: %+v %v", r, err)
	}
	if _, err := off.Count(ctx, "never asked"); !errors.Is(err, ErrNotCached) {
		t.Fatalf("offline miss: %v", err)
	}
	// A corrupt line in the middle is an error naming the line.
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte("not json\n{\"key\":\"{}\",\"value\":1}\n"), 0o644)
	if _, err := OpenCache(bad, nil, "idx", ""); err == nil || !strings.Contains(err.Error(), ":1:") {
		t.Fatalf("corrupt cache: %v", err)
	}
}

func TestLoadQuCoCache(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join("testdata", "quco_cache.json")
	c, err := LoadQuCoCache(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		got    func() (Result, error)
		want   Result
		errNot bool
	}{
		{"entity count (python spacing)", func() (Result, error) { return c.Count(ctx, "Barack Obama") }, Result{Count: 123456}, false},
		{"AND without max_diff_tokens means 1000", func() (Result, error) { return c.CoOccur(ctx, "Barack Obama", "Honolulu", 1000) }, Result{Count: 789, Approx: true}, false},
		{"[count, latency] value", func() (Result, error) { return c.Count(ctx, "Polish Land Forces") }, Result{Count: 55}, false},
		{"another window is a miss", func() (Result, error) { return c.CoOccur(ctx, "Barack Obama", "Honolulu", 100) }, Result{}, true},
		{"null value is a miss", func() (Result, error) { return c.Count(ctx, "failed query") }, Result{}, true},
	}
	for _, tc := range cases {
		r, err := tc.got()
		if tc.errNot {
			if !errors.Is(err, ErrNotCached) {
				t.Errorf("%s: %v, want ErrNotCached", tc.name, err)
			}
			continue
		}
		if err != nil || r != tc.want {
			t.Errorf("%s: %+v %v, want %+v", tc.name, r, err, tc.want)
		}
	}
	if c.Skipped != 1 {
		t.Errorf("skipped %d null values, want 1", c.Skipped)
	}
	// Export and reload round-trips.
	out := filepath.Join(t.TempDir(), "export.json")
	if err := c.Export(out); err != nil {
		t.Fatal(err)
	}
	c2, err := LoadQuCoCache(out)
	if err != nil || c2.Len() != c.Len() {
		t.Fatalf("reload: %v, %d vs %d", err, c2.Len(), c.Len())
	}
}

// TestClientCNFParams checks the parameters of the QuCo-RAG authors' get_infini_gram_count:
// max_diff_tokens 1000 and max_clause_freq 500000 go with every query whose text contains "AND" or
// "OR" as a plain substring, and with no other.
func TestClientCNFParams(t *testing.T) {
	var got []Request
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req Request
		json.NewDecoder(r.Body).Decode(&req)
		got = append(got, req)
		w.Write([]byte(`{"count": 7, "approx": false, "latency": 0.5}`))
	}))
	defer ts.Close()
	ctx := context.Background()
	cases := []struct {
		query      string
		diff       int
		clause     uint64
		why        string
		viaCoOccur bool
	}{
		{"Tom AND Jerry", 1000, 500000, "an entity with AND is a CNF query: the authors' window, not the server's 100", false},
		{"ORLANDO Guy", 1000, 500000, "OR as a substring of a word: the authors send the parameters too", false},
		{"Andorra", 0, 0, "no uppercase AND/OR: none", false},
		{"Hal Eva", 0, 0, "a plain entity: none", false},
		{"Hal AND Eva", 1000, 500000, "CoOccur with the QuCo window", true},
	}
	c := &Client{URL: ts.URL}
	for _, tc := range cases {
		got = nil
		var err error
		if tc.viaCoOccur {
			_, err = c.CoOccur(ctx, "Hal", "Eva", 1000)
		} else {
			_, err = c.Count(ctx, tc.query)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Query != tc.query || got[0].MaxDiffTokens != tc.diff || got[0].MaxClauseFreq != tc.clause {
			t.Errorf("%q: sent %+v, want max_diff_tokens %d max_clause_freq %d (%s)", tc.query, got, tc.diff, tc.clause, tc.why)
		}
	}
}

// TestClientRetriesConfigured checks that retries can be turned off (0 in the config, negative on the
// Client) and set.
func TestClientRetriesConfigured(t *testing.T) {
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(503)
		w.Write([]byte(`{"error":"busy"}`))
	}))
	defer ts.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		retries *int
		want    int32
		why     string
	}{
		{nil, 6, "unset: the default 5 retries"},
		{ptr(0), 1, "0: no retry"},
		{ptr(2), 3, "2 retries"},
	} {
		calls.Store(0)
		src, err := Open(ctx, Config{Backend: BackendAPI, APIURL: ts.URL, MaxRetries: tc.retries})
		if err != nil {
			t.Fatal(err)
		}
		src.Counter.(*Client).Backoff = time.Microsecond
		if _, err := src.Count(ctx, "x"); err == nil {
			t.Errorf("%s: a 503 server answered", tc.why)
		}
		if calls.Load() != tc.want {
			t.Errorf("%s: %d requests, want %d", tc.why, calls.Load(), tc.want)
		}
	}
	if _, err := Open(ctx, Config{Backend: BackendAPI, MaxRetries: ptr(-1)}); err == nil || !strings.Contains(err.Error(), "max_retries") {
		t.Errorf("negative max_retries accepted: %v", err)
	}
	if d := (Config{Backend: BackendAPI}).Defaults(); d.MaxClauseFreq != AuthorsMaxClauseFreq {
		t.Errorf("API default max_clause_freq %d, want the authors' %d", d.MaxClauseFreq, AuthorsMaxClauseFreq)
	}
}

func ptr[T any](v T) *T { return &v }
