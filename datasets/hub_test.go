package datasets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragbench/ragbench/internal/testenv"
)

// fakeHub serves files of ../shared/data in the Hub's URL layout: the tree API
// (/api/datasets/{repo}/tree/{rev}/{dir}) and resolve URLs, which redirect to a separate "CDN" server
// as the Hub does for LFS files.
type fakeHub struct {
	t       *testing.T
	files   map[string]string // "repo/path" -> local file
	token   string
	hub     *httptest.Server
	cdn     *httptest.Server
	mu      sync.Mutex
	cut     map[string]bool // "repo/path" -> the next GET breaks off half way
	gets    int
	ranges  []string
	cdnAuth int // requests that reached the CDN with an Authorization header
}

func newFakeHub(t *testing.T, token string, files map[string]string) *fakeHub {
	h := &fakeHub{t: t, files: files, token: token, cut: map[string]bool{}}
	h.cdn = httptest.NewServer(http.HandlerFunc(h.serveCDN))
	h.hub = httptest.NewServer(http.HandlerFunc(h.serveHub))
	t.Cleanup(func() { h.hub.Close(); h.cdn.Close() })
	return h
}

func sha256File(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func (h *fakeHub) serveHub(w http.ResponseWriter, r *http.Request) {
	if h.token != "" && r.Header.Get("Authorization") != "Bearer "+h.token {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/api/datasets/"):
		rest := strings.TrimPrefix(p, "/api/datasets/")
		parts := strings.SplitN(rest, "/", 5) // owner, name, "tree", rev, dir
		if len(parts) < 5 || parts[2] != "tree" {
			http.NotFound(w, r)
			return
		}
		repo, dir := parts[0]+"/"+parts[1], parts[4]
		var out []map[string]any
		for key, local := range h.files {
			if !strings.HasPrefix(key, repo+"/"+dir+"/") {
				continue
			}
			st, _ := os.Stat(local)
			out = append(out, map[string]any{"type": "file", "path": strings.TrimPrefix(key, repo+"/"), "size": st.Size(),
				"oid": "0123", "lfs": map[string]any{"oid": sha256File(h.t, local), "size": st.Size(), "pointerSize": 134}})
		}
		if out == nil {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(out)
	case strings.HasPrefix(p, "/datasets/"):
		rest := strings.TrimPrefix(p, "/datasets/")
		parts := strings.SplitN(rest, "/", 5) // owner, name, "resolve", rev, path
		if len(parts) < 5 || parts[2] != "resolve" {
			http.NotFound(w, r)
			return
		}
		key := parts[0] + "/" + parts[1] + "/" + parts[4]
		local, ok := h.files[key]
		if !ok {
			http.NotFound(w, r)
			return
		}
		st, _ := os.Stat(local)
		w.Header().Set("X-Linked-Size", fmt.Sprint(st.Size()))
		w.Header().Set("X-Linked-Etag", `"`+sha256File(h.t, local)+`"`)
		http.Redirect(w, r, h.cdn.URL+"/blob/"+key, http.StatusFound)
	default:
		http.NotFound(w, r)
	}
}

func (h *fakeHub) serveCDN(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, "/blob/")
	local, ok := h.files[key]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h.mu.Lock()
	h.gets++
	if r.Header.Get("Authorization") != "" {
		h.cdnAuth++
	}
	if rg := r.Header.Get("Range"); rg != "" {
		h.ranges = append(h.ranges, rg)
	}
	cut := h.cut[key]
	h.cut[key] = false
	h.mu.Unlock()
	b, _ := os.ReadFile(local)
	w.Header().Set("ETag", `"`+sha256File(h.t, local)+`"`)
	if cut {
		// Promise the whole file, send half, and drop the connection.
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.WriteHeader(http.StatusOK)
		w.Write(b[:len(b)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler)
	}
	http.ServeContent(w, r, filepath.Base(local), st0, bytes.NewReader(b))
}

var st0 = testTime()

func TestFetchFromHub(t *testing.T) {
	local := testenv.Data(t, "nq_open/validation-00000-of-00001.parquet")
	hub := newFakeHub(t, "secret-token-123", map[string]string{
		"google-research-datasets/nq_open/nq_open/validation-00000-of-00001.parquet": local,
	})
	cache := t.TempDir()
	t.Setenv("RAGBENCH_CACHE", cache)
	t.Setenv("RAGBENCH_DATA", "")
	t.Setenv("HF_ENDPOINT", hub.hub.URL)
	t.Setenv("HF_TOKEN", "secret-token-123")
	var progress bytes.Buffer
	f := NewFetcher(&progress)
	hub.cut["google-research-datasets/nq_open/nq_open/validation-00000-of-00001.parquet"] = true

	dir, res, err := FetchName(context.Background(), f, "nq-open")
	if err != nil {
		t.Fatalf("fetch: %v\nprogress:\n%s", err, progress.String())
	}
	if want := filepath.Join(cache, "data", "nq_open"); dir != want {
		t.Errorf("fetched into %s, want %s", dir, want)
	}
	if len(res) != 1 || res[0].Cached || res[0].SHA256 != sha256File(t, local) {
		t.Fatalf("results %+v", res)
	}
	got := filepath.Join(dir, "validation-00000-of-00001.parquet")
	if sha256File(t, got) != sha256File(t, local) {
		t.Fatal("downloaded file differs from the served one")
	}
	// The first transfer broke half way; the second resumed with a Range request from the break.
	st, _ := os.Stat(local)
	if hub.gets != 2 || len(hub.ranges) != 1 || hub.ranges[0] != fmt.Sprintf("bytes=%d-", st.Size()/2) {
		t.Errorf("%d GETs with ranges %v; want a broken transfer then a resume from byte %d", hub.gets, hub.ranges, st.Size()/2)
	}
	if hub.cdnAuth != 0 {
		t.Errorf("the token was sent to the CDN host %d times", hub.cdnAuth)
	}
	if strings.Contains(progress.String(), "secret-token-123") {
		t.Error("the token appears in the progress output")
	}
	if _, err := os.Stat(got + ".part"); !os.IsNotExist(err) {
		t.Error("the .part file is left behind")
	}
	// The fetched copy loads by name from the cache (run from a directory with no shared/data beside
	// it) and equals the shared one.
	ref, err := Load(context.Background(), local, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	ds, err := Load(context.Background(), "nq_open", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Files[0] != got {
		t.Errorf("loaded %v, want the cached copy %s", ds.Files, got)
	}
	if !reflect.DeepEqual(ds.Examples, ref.Examples) {
		t.Error("the fetched copy loads differently from the original")
	}
	// A second fetch finds the complete file and downloads nothing.
	gets := hub.gets
	_, res, err = FetchName(context.Background(), f, "nq_open")
	if err != nil || !res[0].Cached || hub.gets != gets {
		t.Fatalf("second fetch: err %v, cached %v, %d new GETs", err, res[0].Cached, hub.gets-gets)
	}
}

func TestFetchErrors(t *testing.T) {
	local := testenv.Data(t, "pubmedqa/pqa_labeled/train-00000-of-00001.parquet")
	hub := newFakeHub(t, "tok", map[string]string{"qiaojin/PubMedQA/pqa_labeled/train-00000-of-00001.parquet": local})
	t.Setenv("RAGBENCH_CACHE", t.TempDir())
	t.Setenv("HF_ENDPOINT", hub.hub.URL)
	cases := []struct {
		name, dataset, token, want string
	}{
		{"no token is unauthorized, with a hint", "pubmedqa", "", "HF_TOKEN"},
		{"a wrong token is unauthorized and not echoed", "pubmedqa", "wrong-tok", "401"},
		{"a dataset with no Hub source says how to build it", "2wikimultihopqa", "tok", "import"},
		{"an unknown dataset lists the known ones", "squad", "tok", "known:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HF_TOKEN", tc.token)
			_, _, err := FetchName(context.Background(), NewFetcher(nil), tc.dataset)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
			if tc.token != "" && strings.Contains(err.Error(), tc.token) {
				t.Fatalf("error %q contains the token", err)
			}
		})
	}
	// A corrupted transfer (checksum mismatch) is rejected and leaves nothing in place.
	t.Setenv("HF_TOKEN", "tok")
	dest := t.TempDir()
	f := NewFetcher(nil)
	_, err := f.FetchFile(context.Background(), HubSource{Repo: "qiaojin/PubMedQA"}, "pqa_labeled/train-00000-of-00001.parquet",
		filepath.Join(dest, "x.parquet"), -1, strings.Repeat("0", 64))
	if err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Fatalf("error %v, want a checksum mismatch", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dest, "*")); len(m) != 0 {
		t.Fatalf("files left behind: %v", m)
	}
}

func testTime() (t0 time.Time) { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) }

// A .part file left by an earlier, killed run is resumed, not restarted.
func TestFetchResumesPartFile(t *testing.T) {
	local := testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet")
	key := "hotpotqa/hotpot_qa/distractor/validation-00000-of-00001.parquet"
	hub := newFakeHub(t, "", map[string]string{key: local})
	t.Setenv("HF_ENDPOINT", hub.hub.URL)
	t.Setenv("HF_TOKEN", "")
	b, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	dest := t.TempDir()
	out := filepath.Join(dest, "validation-00000-of-00001.parquet")
	if err := os.WriteFile(out+".part", b[:1000], 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := NewFetcher(nil).Fetch(context.Background(), HubSource{Repo: "hotpotqa/hotpot_qa", Dir: "distractor", Split: "validation"}, dest)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || !reflect.DeepEqual(hub.ranges, []string{"bytes=1000-"}) {
		t.Fatalf("results %+v, ranges %v; want one resume from byte 1000", res, hub.ranges)
	}
	if sha256File(t, out) != sha256File(t, local) {
		t.Fatal("resumed file differs")
	}
}
