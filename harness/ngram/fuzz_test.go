package ngram

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func FuzzParseCacheKey(f *testing.F) {
	f.Add(`{"args": ["a"], "kwargs": {"index": "x"}}`)
	f.Add(`{"args": ["a AND b"], "kwargs": {"index": "x", "max_diff_tokens": 10}}`)
	f.Add(`{"args": [], "kwargs": null}`)
	f.Fuzz(func(t *testing.T, s string) {
		k, err := parseCacheKey(s)
		if err != nil {
			return
		}
		k2, err := parseCacheKey(k.String())
		if err != nil || k2.id() != k.id() {
			t.Fatalf("round trip of %q: %+v vs %+v (%v)", s, k, k2, err)
		}
	})
}

func FuzzServerRequest(f *testing.F) {
	ix, _ := buildDocs(f, []string{"a b c", "b c d a"}, BuildOptions{})
	srv := &Server{Index: ix}
	h := srv.Handler()
	f.Add(`{"index":"x","query_type":"count","query":"a AND b OR c"}`)
	f.Add(`{"index":"x","query_type":"count","query_ids":[[[1,2]],[[3]]]}`)
	f.Add(`{"index":"x","query_type":"ntd","query_ids":[]}`)
	f.Add(`{"index":"x","query_type":"prob","query":""}`)
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)).WithContext(context.Background())
		h.ServeHTTP(rec, req)
		if rec.Code != 200 && !strings.Contains(rec.Body.String(), `"error"`) {
			t.Fatalf("HTTP %d without an error field: %s", rec.Code, rec.Body.String())
		}
	})
}
