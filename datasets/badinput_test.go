package datasets

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ragbench/ragbench/internal/testenv"
)

func writeParquet[T any](t *testing.T, path string, rows []T) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := parquet.WriteFile(path, rows); err != nil {
		t.Fatal(err)
	}
	return path
}

type nqRow struct {
	Question string   `parquet:"question,optional"`
	Answer   []string `parquet:"answer,optional,list"`
}

type nqIntRow struct {
	Question string  `parquet:"question,optional"`
	Answer   []int64 `parquet:"answer,optional,list"`
}

type nqNullRow struct {
	Question *string  `parquet:"question,optional"`
	Answer   []string `parquet:"answer,optional,list"`
}

type hotpotNoContext struct {
	ID       string `parquet:"id,optional"`
	Question string `parquet:"question,optional"`
	Answer   string `parquet:"answer,optional"`
	Type     string `parquet:"type,optional"`
	Level    string `parquet:"level,optional"`
	SF       sfCols `parquet:"supporting_facts,optional"`
}

type customRow struct {
	QID    string   `parquet:"qid"`
	Query  string   `parquet:"query"`
	Golds  []string `parquet:"golds,list"`
	Titles []string `parquet:"titles,list"`
	Texts  []string `parquet:"texts,list"`
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	real := testenv.Data(t, "nq_open/validation-00000-of-00001.parquet")
	b, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.parquet")
	os.WriteFile(truncated, b[:len(b)/2], 0o644)
	corruptFooter := filepath.Join(dir, "corrupt-footer.parquet")
	cf := append([]byte(nil), b...)
	for i := len(cf) - 200; i < len(cf)-8; i++ {
		cf[i] ^= 0x5a
	}
	os.WriteFile(corruptFooter, cf, 0o644)
	corruptPages := filepath.Join(dir, "corrupt-pages.parquet")
	cp := append([]byte(nil), b...)
	for i := 100; i < len(cp)/2; i += 7 {
		cp[i] ^= 0xff
	}
	os.WriteFile(corruptPages, cp, 0o644)
	empty := filepath.Join(dir, "empty.parquet")
	os.WriteFile(empty, nil, 0o644)
	notParquet := filepath.Join(dir, "text.parquet")
	os.WriteFile(notParquet, []byte("question,answer\nwho?,me\n"), 0o644)

	wrongType := writeParquet(t, filepath.Join(dir, "wrong-type.parquet"), []nqIntRow{{"q", []int64{1}}})
	emptyQ := writeParquet(t, filepath.Join(dir, "empty-question.parquet"), []nqRow{{"who?", []string{"a"}}, {"  ", []string{"b"}}})
	nullQ := writeParquet(t, filepath.Join(dir, "null-question.parquet"), []nqNullRow{{nil, []string{"b"}}})
	dataDir := filepath.Join(dir, "data")
	writeParquet(t, filepath.Join(dataDir, "hotpotqa/distractor/validation-00000-of-00001.parquet"),
		[]hotpotNoContext{{ID: "x", Question: "q", Answer: "a"}})
	dup := writeParquet(t, filepath.Join(dir, "dup.parquet"), []customRow{{QID: "1", Query: "a", Golds: []string{"x"}}, {QID: "2", Query: "b", Golds: []string{"y"}}, {QID: "1", Query: "c", Golds: []string{"z"}}})
	shards := filepath.Join(dir, "shards")
	writeParquet(t, filepath.Join(shards, "validation-00000-of-00003.parquet"), []nqRow{{"q", []string{"a"}}})
	writeParquet(t, filepath.Join(shards, "validation-00002-of-00003.parquet"), []nqRow{{"q", []string{"a"}}})
	twoSplits := filepath.Join(dir, "splits")
	writeParquet(t, filepath.Join(twoSplits, "train-00000-of-00001.parquet"), []nqRow{{"q", []string{"a"}}})
	writeParquet(t, filepath.Join(twoSplits, "validation-00000-of-00001.parquet"), []nqRow{{"q", []string{"a"}}})

	cases := []struct {
		name    string
		spec    string
		opts    LoadOptions
		env     string   // RAGBENCH_DATA
		want    []string // substrings of the error
		because string
	}{
		{"missing file", filepath.Join(dir, "nope.parquet"), LoadOptions{}, "", []string{"nope.parquet", "no such file"}, "the path is named"},
		{"unknown name", "squad2", LoadOptions{}, "", []string{"unknown dataset", "hotpotqa-fullwiki"}, "known names are listed"},
		{"empty file", empty, LoadOptions{}, "", []string{"empty.parquet", "truncated or empty"}, "zero bytes is not parquet"},
		{"not parquet", notParquet, LoadOptions{}, "", []string{"text.parquet", "not a readable parquet file"}, "no magic/footer"},
		{"truncated", truncated, LoadOptions{}, "", []string{"truncated.parquet"}, "the footer is cut off"},
		{"corrupt footer", corruptFooter, LoadOptions{}, "", []string{"corrupt-footer.parquet"}, "the metadata is garbage"},
		{"corrupt pages", corruptPages, LoadOptions{}, "", []string{"corrupt-pages.parquet"}, "the data pages are garbage"},
		{"wrong column type", wrongType, LoadOptions{}, "", []string{"wrong-type.parquet", "column answer", "list of int64", "want list of string"}, "answers must be text"},
		{"empty question", emptyQ, LoadOptions{}, "", []string{"empty-question.parquet", "row 1", "column question", "empty question"}, "a blank question cannot be asked"},
		{"null question", nullQ, LoadOptions{}, "", []string{"null-question.parquet", "row 0", "column question"}, "null is empty"},
		{"missing column of a known layout", "hotpotqa", LoadOptions{}, dataDir, []string{"validation-00000-of-00001.parquet", `missing column "context.title"`}, "HotpotQA needs its contexts"},
		{"duplicate ids", dup, LoadOptions{Columns: &Mapping{ID: "qid", Question: "query", Answers: "golds"}}, "", []string{"dup.parquet", "row 2", "column qid", "duplicate id \"1\"", "row 0"}, "ids key the predictions"},
		{"missing custom column", dup, LoadOptions{Columns: &Mapping{Question: "prompt", Answers: "golds"}}, "", []string{"dup.parquet", `missing column "prompt"`, "query"}, "the columns present are listed"},
		{"mapping without answers", dup, LoadOptions{Columns: &Mapping{Question: "query"}}, "", []string{"answers not set"}, "answers are required"},
		{"missing shard", shards, LoadOptions{}, "", []string{"validation-00001-of-00003.parquet", "missing"}, "a gap in the shards"},
		{"several splits", twoSplits, LoadOptions{}, "", []string{"train", "validation", "--split"}, "ambiguous directory"},
		{"split chosen", twoSplits, LoadOptions{Split: "test"}, "", []string{`no shards of split "test"`}, "absent split"},
		{"negative limit", real, LoadOptions{Limit: -1}, "", []string{"negative"}, "bad option"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("RAGBENCH_DATA", tc.env)
			t.Setenv("RAGBENCH_CACHE", filepath.Join(dir, "cache"))
			if tc.env != "" {
				t.Chdir(dir) // keep ../shared/data out of the search
			}
			_, err := Load(context.Background(), tc.spec, tc.opts)
			if err == nil {
				t.Fatalf("no error (%s)", tc.because)
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q (%s)", err, w, tc.because)
				}
			}
		})
	}
}

// Problems where going on is right are counted warnings that name the file, row and column.
func TestWarnings(t *testing.T) {
	dir := t.TempDir()
	p := writeParquet(t, filepath.Join(dir, "warn.parquet"), []nqRow{
		{"fine", []string{"a"}},
		{"no answers", nil},
		{"empty answers", []string{"", " "}},
		{"bad \xff utf8", []string{"ok", ""}},
	})
	ds, err := Load(context.Background(), p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		row    int
		column string
		msg    string
	}{
		{3, "question", "invalid UTF-8"},
		{1, "answer", "no gold answer"},
		{2, "answer", "only empty strings"},
		{3, "answer", "1 empty gold answer(s) dropped"},
	}
	if len(ds.Warnings) != len(want) {
		t.Fatalf("%d warnings, want %d: %v", len(ds.Warnings), len(want), ds.Warnings)
	}
	for i, w := range want {
		got := ds.Warnings[i]
		if got.File != p || got.Row != w.row || got.Column != w.column || !strings.Contains(got.Message, w.msg) {
			t.Errorf("warning %d = %v, want row %d column %s %q", i, got, w.row, w.column, w.msg)
		}
	}
	if q := ds.Examples[3].Question; q != "bad \uFFFD utf8" {
		t.Errorf("invalid UTF-8 repaired to %q", q)
	}
	if len(ds.Examples) != 4 || ds.Examples[1].Answers != nil || len(ds.Examples[3].Answers) != 1 {
		t.Errorf("examples kept wrongly: %+v", ds.Examples)
	}
}

func TestCustomDataset(t *testing.T) {
	dir := t.TempDir()
	rows := []customRow{
		{QID: "a1", Query: "who?", Golds: []string{"me", "myself"}, Titles: []string{"T1", "T2"}, Texts: []string{"x", "y"}},
		{QID: "a2", Query: "what?", Golds: []string{"it"}},
	}
	writeParquet(t, filepath.Join(dir, "data", "test-00000-of-00001.parquet"), rows)
	spec := filepath.Join(dir, "mine.yaml")
	os.WriteFile(spec, []byte("name: mine\npath: data\ncolumns:\n  id: qid\n  question: query\n  answers: golds\n  context_title: titles\n  context_text: texts\n"), 0o644)
	ds, err := Load(context.Background(), spec, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Name != "mine" || ds.Layout != LayoutCustom || len(ds.Examples) != 2 {
		t.Fatalf("name %q layout %q, %d examples", ds.Name, ds.Layout, len(ds.Examples))
	}
	ex := ds.Examples[0]
	if ex.ID != "a1" || ex.Dataset != "mine" || ex.Question != "who?" || len(ex.Answers) != 2 || len(ex.Contexts) != 2 || !reflect.DeepEqual(ex.Contexts[1], Passage{Title: "T2", Text: "y"}) {
		t.Errorf("example %+v", ex)
	}
	// The same with a JSON spec, and with the mapping given directly (as the CLI flags do).
	js := filepath.Join(dir, "mine.json")
	os.WriteFile(js, []byte(`{"path": "data", "columns": {"id": "qid", "question": "query", "answers": "golds"}}`), 0o644)
	ds2, err := Load(context.Background(), js, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds3, err := Load(context.Background(), filepath.Join(dir, "data"), LoadOptions{Columns: &Mapping{ID: "qid", Question: "query", Answers: "golds"}})
	if err != nil {
		t.Fatal(err)
	}
	if ds2.Examples[1].ID != "a2" || ds3.Examples[1].Answers[0] != "it" || ds2.Name != "mine" {
		t.Errorf("json spec %+v / mapping %+v", ds2.Examples[1], ds3.Examples[1])
	}
	// A spec with an unknown key is an error, not a silent no-op.
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("path: data\ncolumns: {question: query, answers: golds, answer_col: x}\n"), 0o644)
	if _, err := Load(context.Background(), bad, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "answer_col") {
		t.Errorf("unknown key: error %v", err)
	}
}

// The same HotpotQA row stored as a list of structs (context: [{title, sentences}]) instead of the Hub's
// struct of lists loads to the same Example: columns are found by logical path, whatever the nesting.
type ctxStruct struct {
	Title     string   `parquet:"title"`
	Sentences []string `parquet:"sentences,list"`
}

type sfStruct struct {
	Title  string `parquet:"title"`
	SentID int32  `parquet:"sent_id"`
}

type hotpotListOfStructs struct {
	ID       string      `parquet:"id"`
	Question string      `parquet:"question"`
	Answer   string      `parquet:"answer"`
	Type     string      `parquet:"type"`
	Level    string      `parquet:"level"`
	SF       []sfStruct  `parquet:"supporting_facts,list"`
	Context  []ctxStruct `parquet:"context,list"`
}

func TestListOfStructsLayout(t *testing.T) {
	dir := t.TempDir()
	a := writeParquet(t, filepath.Join(dir, "a.parquet"), []hotpotListOfStructs{{ID: "x1", Question: "q?", Answer: "a", Type: "bridge", Level: "easy",
		SF:      []sfStruct{{"T1", 0}, {"T2", 1}},
		Context: []ctxStruct{{"T1", []string{"s1", "s2"}}, {"T2", []string{}}, {"T3", []string{"s3"}}}}})
	b := writeParquet(t, filepath.Join(dir, "b.parquet"), []hotpotRow{{ID: "x1", Question: "q?", Answer: "a", Type: "bridge", Level: "easy",
		SupportingFacts: sfCols{Title: []string{"T1", "T2"}, SentID: []int32{0, 1}},
		Context:         ctxCols{Title: []string{"T1", "T2", "T3"}, Sentences: [][]string{{"s1", "s2"}, {}, {"s3"}}}}})
	da, err := Load(context.Background(), a, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := Load(context.Background(), b, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if da.Layout != LayoutHotpotQA || !reflect.DeepEqual(da.Examples, db.Examples) {
		t.Fatalf("list of structs: %s %+v\nstruct of lists: %+v", da.Layout, da.Examples, db.Examples)
	}
}
