package elastic

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParseDPRLine(f *testing.F) {
	for _, s := range []string{"1\ttext\ttitle", "2\t\"quoted \"\"x\"\"\"\t\"T\"", "\t\t", "a\tb", "1\t\"\tx", "1\t\xff\tx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, txt, title, err := parseDPRLine(s)
		if err != nil {
			return
		}
		if id == "" || strings.Contains(id, "\t") || !utf8.ValidString(txt+title) {
			t.Fatalf("accepted %q as id %q", s, id)
		}
		if len(txt)+len(title)+len(id)+2 > len(s) {
			t.Fatalf("fields longer than the line: %q", s)
		}
	})
}

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
