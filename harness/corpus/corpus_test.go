package corpus

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

func write(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readAll(t *testing.T, p string, f Format) ([]Document, error) {
	t.Helper()
	var docs []Document
	err := Each(context.Background(), p, f, func(d Document) error { docs = append(docs, d); return nil })
	return docs, err
}

func TestReaders(t *testing.T) {
	cases := []struct {
		name, file, body string
		want             []Document
		wantErr          string
	}{
		{"DPR TSV skips the header", "a.tsv", "id\ttext\ttitle\n1\thello world\tGreeting\n", []Document{{ID: "1", Title: "Greeting", Text: "hello world"}}, ""},
		{"DPR CSV-quoted fields are unquoted", "a.tsv", "1\t\"say \"\"hi\"\"\"\tT\n", []Document{{ID: "1", Title: "T", Text: `say "hi"`}}, ""},
		{"DPR text that only starts with a quote is kept", "a.tsv", "1\t\"A\" is a song \"x\"\tT\n", []Document{{ID: "1", Title: "T", Text: `"A" is a song "x"`}}, ""},
		{"DPR wrong field count names the line", "a.tsv", "id\ttext\ttitle\n1\tonly two\n", nil, "a.tsv:2: want 3"},
		{"DPR invalid UTF-8 is an error", "a.tsv", "1\tbad \xff\tT\n", nil, "not valid UTF-8"},
		{"BEIR JSONL", "a.jsonl", `{"_id":"d1","title":"T","text":"body"}` + "\n\n", []Document{{ID: "d1", Title: "T", Text: "body"}}, ""},
		{"Pyserini contents with a quoted title line", "a.jsonl", `{"id":"0","contents":"\"Evan\"\nEvan was"}` + "\n", []Document{{ID: "0", Title: "Evan", Text: "Evan was"}}, ""},
		{"numeric id is kept as text", "a.jsonl", `{"id":7,"contents":"x"}` + "\n", []Document{{ID: "7", Text: "x"}}, ""},
		{"JSONL without an id names the field", "a.jsonl", `{"text":"x"}` + "\n", nil, "field _id"},
		{"JSONL syntax error names the line", "a.jsonl", `{"_id":"1","text":"x"}` + "\n{oops\n", nil, "a.jsonl:2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := readAll(t, write(t, tc.file, tc.body), FormatAuto)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(docs) != len(tc.want) {
				t.Fatalf("got %d docs %+v, want %+v", len(docs), docs, tc.want)
			}
			for i := range docs {
				if docs[i] != tc.want[i] {
					t.Fatalf("doc %d = %+v, want %+v", i, docs[i], tc.want[i])
				}
			}
		})
	}
}

func TestDirReader(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("bee"), 0o644)
	os.WriteFile(filepath.Join(dir, "sub", "a.txt"), []byte("ay"), 0o644)
	os.WriteFile(filepath.Join(dir, "skip.md"), []byte("no"), 0o644)
	docs, err := readAll(t, dir, FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0].ID != "b" || docs[1].ID != "sub/a" || docs[1].Text != "ay" {
		t.Fatalf("docs = %+v", docs)
	}
}

func TestRealCorpora(t *testing.T) {
	cases := []struct {
		file            string
		n               int
		firstID, title0 string
	}{
		{"corpus/nq-wiki-passages.tsv", 4337, "11828866", "Does He Love You"},
		{"corpus/2wiki-paragraphs.jsonl", 6119, "2wiki-0", "Teutberga"},
		{"corpus/kilt-wiki-pages.jsonl", 99, "kilt-0", "A"},
		{"raw/corpus/sample_data.jsonl", 1000, "0", "Evan Morris"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			docs, err := readAll(t, testenv.Data(t, tc.file), FormatAuto)
			if err != nil {
				t.Fatal(err)
			}
			if len(docs) != tc.n || docs[0].ID != tc.firstID || docs[0].Title != tc.title0 {
				t.Fatalf("n=%d first=%+v", len(docs), docs[0])
			}
		})
	}
}
