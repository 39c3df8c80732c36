package elastic

import (
	"testing"
)

func FuzzParseError(f *testing.F) {
	for _, name := range []string{"error_index_not_found.json", "error_429.json", "error_503.json", "create_exists.json"} {
		b, _ := readFileNoT(name)
		f.Add(503, b)
	}
	f.Add(500, []byte(`{"error":"plain string"}`))
	f.Add(502, []byte(`<html>bad gateway</html>`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := parseError(status, body)
		if e == nil || e.Error() == "" {
			t.Fatal("no error")
		}
		if len(e.Body) > 303 {
			t.Fatalf("raw body not truncated: %d bytes", len(e.Body))
		}
	})
}
