package llm

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// responseFiles returns the recorded response bodies under testdata/responses, with their endpoint.
func responseFiles(t testing.TB) map[string]Endpoint {
	files, err := filepath.Glob(filepath.Join("testdata", "responses", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no response files: %v", err)
	}
	out := map[string]Endpoint{}
	for _, f := range files {
		ep := Completions
		if strings.Contains(filepath.Base(f), "chat") {
			ep = Chat
		}
		out[f] = ep
	}
	return out
}

// TestDecodeGolden decodes each server's recorded response shape and compares with
// testdata/golden/<name>.json (go test -run TestDecodeGolden -update rewrites them).
func TestDecodeGolden(t *testing.T) {
	for f, ep := range responseFiles(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			resp, reported, decErr := decodeResponse(ep, body)
			got := map[string]any{"usage_reported": reported}
			if decErr != nil {
				got["error"] = decErr.Error()
			} else {
				got["response"] = resp
			}
			gb, _ := json.MarshalIndent(got, "", "  ")
			gb = append(gb, '\n')
			golden := filepath.Join("testdata", "golden", name+".json")
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, gb, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(gb, want) {
				t.Fatalf("decode differs from %s:\n%s", golden, gb)
			}
			if strings.HasPrefix(name, "malformed") {
				if decErr == nil {
					t.Fatal("malformed body decoded without error")
				}
				var me *MalformedError
				if !errorsAs(decErr, &me) || me.Excerpt == "" {
					t.Fatalf("error %v is not a MalformedError with an excerpt", decErr)
				}
			} else if decErr != nil {
				t.Fatal(decErr)
			}
		})
	}
}

func errorsAs(err error, me **MalformedError) bool {
	m, ok := err.(*MalformedError)
	if ok {
		*me = m
	}
	return ok
}

// FuzzDecode checks that no body makes the decoder panic, and that a decoded response can be stored
// (JSON-encoded) in the cache. Seeds: the recorded shapes in testdata/responses.
func FuzzDecode(f *testing.F) {
	for file, ep := range responseFiles(f) {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, ep == Chat)
	}
	f.Fuzz(func(t *testing.T, body []byte, chat bool) {
		ep := Completions
		if chat {
			ep = Chat
		}
		resp, _, err := decodeResponse(ep, body)
		if err != nil {
			if _, ok := err.(*MalformedError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if _, err := json.Marshal(resp); err != nil {
			t.Fatalf("decoded response cannot be cached: %v", err)
		}
	})
}
