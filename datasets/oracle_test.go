package datasets

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadOracle(t *testing.T) {
	good := `{"question": "who wrote it", "answers": ["A"], "ctxs": [{"title": "T", "text": "A wrote it."}]}` + "\n\n" +
		`{"question": "who wrote it", "ctxs": [{"title": "U", "text": "B too."}]}` + "\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(good))
	zw.Close()
	want := map[string][]Passage{"who wrote it": {{Title: "T", Text: "A wrote it."}, {Title: "U", Text: "B too."}}}
	cases := []struct {
		name, reason string
		content      []byte
		want         map[string][]Passage
		err          string
	}{
		{"plain.jsonl", "plain JSONL; a question's passages accumulate; blank lines skipped", []byte(good), want, ""},
		{"oracle.jsonl.gz", "gzip is detected by its magic bytes", gz.Bytes(), want, ""},
		{"bad.jsonl", "a malformed line is named", []byte(good + "{nope\n"), nil, "bad.jsonl:4:"},
		{"noq.jsonl", "a record without question is named", []byte(`{"ctxs": []}` + "\n"), nil, `noq.jsonl:1: field "question" is missing`},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), c.name)
		if err := os.WriteFile(path, c.content, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadOracle(context.Background(), path)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q (%s)", c.name, err, c.err, c.reason)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, %v; want %v (%s)", c.name, got, err, c.want, c.reason)
		}
	}
	if _, err := ReadOracle(context.Background(), filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file must be an error")
	}
}

func TestReadGoldOracle(t *testing.T) {
	content := `{"question": "q1", "ctxs": [{"title": "A", "text": "gold", "isgold": true}, {"title": "B", "text": "distractor"}]}` + "\n" +
		`{"question": "q2", "ctxs": [{"title": "C", "text": "not gold", "isgold": false}]}` + "\n" +
		`{"question": "q1", "ctxs": [{"title": "D", "text": "second gold", "isgold": true}]}` + "\n"
	path := filepath.Join(t.TempDir(), "o.jsonl")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadGoldOracle(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	// Only isgold passages are kept; q2 has none and so no key; q1's gold passages accumulate.
	want := map[string][]Passage{"q1": {{Title: "A", Text: "gold"}, {Title: "D", Text: "second gold"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	all, err := ReadOracle(context.Background(), path)
	if err != nil || len(all["q1"]) != 3 || len(all["q2"]) != 1 {
		t.Fatalf("ReadOracle keeps every passage: got %v, %v", all, err)
	}
}

// FuzzReadOracle: any content gives passages or an error, never a panic; every key is a non-blank
// question. Seeds: testdata/fuzz/FuzzReadOracle.
func FuzzReadOracle(f *testing.F) {
	f.Add([]byte(`{"question": "q", "ctxs": [{"title": "T", "text": "x"}]}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "o.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadOracle(context.Background(), path)
		if err != nil {
			return
		}
		for q := range got {
			if strings.TrimSpace(q) == "" {
				t.Fatalf("blank question key from %q", data)
			}
		}
	})
}
