package datasets

import (
	"bytes"
	"strings"
	"testing"
)

func TestReportWriteText(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes of two-byte runes
	r := &Report{Name: "d", Layout: "hotpotqa", Files: []string{"f.parquet"}, Rows: 2, Total: 5,
		Columns: []ColumnInfo{{"question", "string"}}, Labels: map[string]int{"yes": 2, "no": 1},
		Example: &Example{ID: "x", Question: "q?", Contexts: []Passage{{Title: "a", Text: long}, {Text: "b"}, {Text: "c"}, {Text: "d"}}}}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"dataset  d (layout hotpotqa)\n", "file     f.parquet\n", "rows     2 selected of 5\n", "  question  string\n",
		"labels: no 1, yes 2\n", strings.Repeat("é", 150) + " …", `"text": "c"`} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"text": "d"`) || strings.Contains(out, strings.Repeat("é", 151)) {
		t.Errorf("at most 3 contexts, long texts cut at 300 bytes on a rune boundary:\n%s", out)
	}
	if r.Example.Contexts[0].Text != long || len(r.Example.Contexts) != 4 {
		t.Error("WriteText must not change the report")
	}
}

func TestTruncateUTF8(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{{"abc", 5, "abc"}, {"abcdef", 3, "abc"}, {"aé", 2, "a"}, {"日本", 4, "日"}, {"日本", 0, ""}} {
		if got := truncateUTF8(c.s, c.n); got != c.want {
			t.Errorf("truncateUTF8(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
