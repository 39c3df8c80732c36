package main

import (
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
)

// fakeCluster answers like Elasticsearch 8 (bodies recorded from a real cluster, shortened).
func fakeCluster(t *testing.T) (string, *[]string) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/":
			io.WriteString(w, `{"name":"es01","cluster_name":"docker-cluster","version":{"number":"8.11.1","build_flavor":"default","lucene_version":"9.8.0"},"tagline":"You Know, for Search"}`)
		case r.Method == "PUT":
			io.WriteString(w, `{"acknowledged":true,"shards_acknowledged":true,"index":"wiki"}`)
		case r.URL.Path == "/_bulk":
			n := strings.Count(string(body), "\n") / 2
			items := strings.TrimSuffix(strings.Repeat(`{"index":{"_index":"wiki","_id":"x","status":201}},`, n), ",")
			io.WriteString(w, `{"took":3,"errors":false,"items":[`+items+`]}`)
		case r.URL.Path == "/_msearch":
			n := strings.Count(string(body), "\n") / 2
			one := `{"took":2,"hits":{"total":{"value":1,"relation":"eq"},"max_score":7.5,"hits":[{"_index":"wiki","_id":"42","_score":7.5,"_source":{"title":"T","txt":"the text"}}]},"status":200}`
			io.WriteString(w, `{"took":5,"responses":[`+strings.TrimSuffix(strings.Repeat(one+",", n), ",")+`]}`)
		default:
			w.WriteHeader(404)
			io.WriteString(w, `{"error":{"root_cause":[],"type":"index_not_found_exception","reason":"no such index [nope]"},"status":404}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &paths
}

func TestElasticCLI(t *testing.T) {
	url, paths := fakeCluster(t)
	t.Setenv("ELASTIC_URL", url)
	out, errOut, code := runCLI(t, "elastic", "ping")
	if code != 0 || !strings.Contains(out, "elasticsearch 8.11.1") {
		t.Fatalf("ping: %d %q %q", code, out, errOut)
	}
	dir := t.TempDir()
	tsv := filepath.Join(dir, "p.tsv")
	os.WriteFile(tsv, []byte("id\ttext\ttitle\n1\ta\tA\n2\tb\tB\n3\tc\tC\n"), 0o644)
	cp := filepath.Join(dir, "cp.json")
	_, errOut, code = runCLI(t, "elastic", "index", "--tsv", tsv, "--create", "--batch", "2", "--checkpoint", cp)
	if code != 0 || !strings.Contains(errOut, "done, 3 documents") {
		t.Fatalf("index: %d %q", code, errOut)
	}
	if _, err := os.Stat(cp); err != nil {
		t.Fatal("no checkpoint written")
	}
	qf := filepath.Join(dir, "q.txt")
	os.WriteFile(qf, []byte("q1\tfirst question\n\nsecond question\n"), 0o644)
	out, errOut, code = runCLI(t, "elastic", "search", "--queries", qf, "--k", "1")
	// The queries file is read as 'search' reads it: a query without an id gets its position (2), so
	// one file gives the same qids to both search commands.
	if code != 0 || out != "q1 Q0 42 1 7.500000 elastic\n2 Q0 42 1 7.500000 elastic\n" {
		t.Fatalf("search: %d %q %q", code, out, errOut)
	}
	out, _, code = runCLI(t, "elastic", "search", "-q", "x", "--json")
	if code != 0 || !strings.Contains(out, `"text":"the text"`) {
		t.Fatalf("json search: %d %q", code, out)
	}
	out, _, code = runCLI(t, "elastic", "search", "-q", "x", "--format", "text")
	if code != 0 || out != "# 1: x\n1. 42  7.5000  T\n   the text\n" {
		t.Fatalf("text search: %d %q", code, out)
	}
	if !strings.Contains(strings.Join(*paths, ","), "PUT /wiki") {
		t.Fatalf("no index creation in %v", *paths)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"search needs a query", []string{"elastic", "search"}, 2},
		{"query and queries together", []string{"elastic", "search", "-q", "a", "--queries", qf}, 2},
		{"bad URL", []string{"elastic", "ping", "--url", "nohost"}, 2},
		{"index needs --tsv", []string{"elastic", "index"}, 2},
		{"a cluster error fails", []string{"elastic", "search", "-q", "a", "--es-index", "nope", "--url", url + "/nope"}, 1},
		{"the old --index still names the cluster index", []string{"elastic", "search", "-q", "a", "--index", "nope", "--url", url + "/nope"}, 1},
		{"--index and --es-index together", []string{"elastic", "search", "-q", "a", "--index", "x", "--es-index", "y", "--url", url}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (%s)", code, tc.code, stderr)
			}
		})
	}
}

// TestElasticRetriesAreVisible: a flaky cluster's retries are printed on stderr, and a refused local
// port fails at once instead of retrying silently.
func TestElasticRetriesAreVisible(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, `{"name":"es01","cluster_name":"c","version":{"number":"8.11.1","build_flavor":"default"}}`)
	}))
	defer srv.Close()
	_, stderr, code := runCLI(t, "elastic", "ping", "--url", srv.URL)
	if code != 0 || strings.Count(stderr, "retrying in") != 2 {
		t.Fatalf("flaky cluster: exit %d, stderr %q; want success after two printed retries", code, stderr)
	}
	_, stderr, code = runCLI(t, "elastic", "ping", "--url", srv.URL, "--retries", "0")
	if code != 0 || strings.Contains(stderr, "retrying") {
		t.Fatalf("--retries 0 must not retry: exit %d, stderr %q", code, stderr)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	start := time.Now()
	_, stderr, code = runCLI(t, "elastic", "ping", "--url", "http://"+addr)
	if code != 1 || strings.Contains(stderr, "retrying") || time.Since(start) > 2*time.Second {
		t.Fatalf("refused loopback port: exit %d after %v, stderr %q; want a prompt failure without retries", code, time.Since(start), stderr)
	}
}

func TestElasticKNNUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"elastic", "search", "--knn", "exact", "-q", "x"}, "--knn needs --embed-model"},
		{[]string{"elastic", "search", "--knn", "ivf", "--embed-model", "m", "-q", "x"}, `knn.mode "ivf"`},
		{[]string{"elastic", "index", "--tsv", "x.tsv", "--knn", "hnsw"}, "--knn needs --embed-model"},
	} {
		_, errOut, code := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Fatalf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}
