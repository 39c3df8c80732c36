package dense

import (
	"context"
	"testing"

	"github.com/ragbench/ragbench/internal/transport/transporttest"
)

// TestEmbeddingsRequestBytes pins the exact bytes, path and headers of an embeddings request: servers
// see these bytes.
func TestEmbeddingsRequestBytes(t *testing.T) {
	cases := []struct {
		why  string
		cfg  OpenAIConfig
		body string
		auth string
	}{
		{"e5 passages with a key: members in name order, the prefix in each input",
			OpenAIConfig{Model: "intfloat/e5-base-v2", Dim: 2, Preset: PresetE5, APIKey: testKey},
			`{"encoding_format":"float","input":["passage: a \u003cb\u003e \u0026 \"c\"","passage: d\n"],"model":"intfloat/e5-base-v2"}`, "Bearer " + testKey},
		{"Matryoshka dimensions are sent; no key: no authorization header",
			OpenAIConfig{Model: "text-embedding-3-small", Dimensions: 2},
			`{"dimensions":2,"encoding_format":"float","input":["a \u003cb\u003e \u0026 \"c\"","d\n"],"model":"text-embedding-3-small"}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.why, func(t *testing.T) {
			srv := transporttest.New(t, `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[3,4]}]}`)
			t.Setenv("OPENAI_API_KEY", "")
			cfg := tc.cfg
			cfg.BaseURL = srv.URL + "/v1/"
			e, err := NewOpenAI(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Embed(context.Background(), []string{"a <b> & \"c\"", "d\n"}, Passage); err != nil {
				t.Fatal(err)
			}
			r := srv.Last()
			if r.Path != "/v1/embeddings" || string(r.Body) != tc.body {
				t.Errorf("path %s body\n %s\nwant\n %s", r.Path, r.Body, tc.body)
			}
			if got := r.Header.Get("Authorization"); got != tc.auth {
				t.Errorf("authorization %q, want %q", got, tc.auth)
			}
			if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Accept") != "application/json" {
				t.Errorf("headers %v", r.Header)
			}
		})
	}
}
