package ngram

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestServerLooseEnds covers what a hostile or careless client could get from ngram serve: the whole
// vocabulary from an empty ntd query, an ignored max_support, trailing data, the separator as a token,
// and requests without the bearer token.
func TestServerLooseEnds(t *testing.T) {
	var docs []string
	for i := 0; i < 50; i++ {
		docs = append(docs, fmt.Sprintf("the cat w%d sat", i))
	}
	ix, _ := buildDocs(t, docs, BuildOptions{})
	srv := &Server{Index: ix, Name: "test"}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	sep := ix.Sep()
	cases := []struct {
		name, body string
		code       int
	}{
		{"ntd with an empty query is refused", `{"index":"test","query_type":"ntd","query":""}`, 400},
		{"ntd with empty query_ids is refused", `{"index":"test","query_type":"ntd","query_ids":[]}`, 400},
		{"data after the JSON object is refused", `{"index":"test","query_type":"count","query":"cat"} trailing`, 400},
		{"a second JSON object is refused", `{"index":"test","query_type":"count","query":"cat"}{"x":1}`, 400},
		{"trailing white space is fine", `{"index":"test","query_type":"count","query":"cat"}` + "\n ", 200},
		{"the separator id is not a token", fmt.Sprintf(`{"index":"test","query_type":"count","query_ids":[%d]}`, sep), 400},
		{"the separator id in a CNF is not a token", fmt.Sprintf(`{"index":"test","query_type":"count","query_ids":[[[1]],[[%d]]]}`, sep), 400},
	}
	for _, c := range cases {
		code, out := post(t, ts.URL, c.body)
		if code != c.code {
			t.Errorf("%s: status %d (%v), want %d", c.name, code, out, c.code)
		}
	}
	// max_support: "the cat" occurs 50 times; with max_support 10 the distribution comes from 10
	// occurrences and says it is approximate, while prompt_cnt stays exact.
	code, out := post(t, ts.URL, `{"index":"test","query_type":"ntd","query":"the cat","max_support":10}`)
	if code != 200 {
		t.Fatalf("ntd: %d %v", code, out)
	}
	res := out["result_by_token_id"].(map[string]any)
	var sum float64
	for _, v := range res {
		sum += v.(map[string]any)["cont_cnt"].(float64)
	}
	if out["approx"] != true || sum != 10 || out["prompt_cnt"].(float64) != 50 {
		t.Errorf("ntd max_support 10: approx %v, %v continuations, prompt_cnt %v; want true, 10, 50", out["approx"], sum, out["prompt_cnt"])
	}
	code, out = post(t, ts.URL, `{"index":"test","query_type":"ntd","query":"the cat","max_support":100}`)
	if code != 200 || out["approx"] != false || len(out["result_by_token_id"].(map[string]any)) != 50 {
		t.Errorf("ntd under max_support must be exact: %d %v", code, out["approx"])
	}
}

func TestServerBearerToken(t *testing.T) {
	ix, _ := buildDocs(t, []string{"a b c"}, BuildOptions{})
	srv := &Server{Index: ix, Token: "s3cret"}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	body := `{"index":"x","query_type":"count","query":"a"}`
	for _, c := range []struct {
		name, auth string
		code       int
	}{
		{"no token", "", 401},
		{"wrong token", "Bearer nope", 401},
		{"right token", "Bearer s3cret", 200},
	} {
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != c.code {
			t.Errorf("%s: %d, want %d", c.name, res.StatusCode, c.code)
		}
	}
}
