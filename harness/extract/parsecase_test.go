package extract

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// show renders ParseCase's items as Python's repr of parse_case's result would, for comparison.
func show(items []CaseItem) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		if it.IsList {
			b.WriteString(show(it.List))
		} else {
			b.WriteString("'" + it.Str + "'")
		}
	}
	b.WriteByte(']')
	return b.String()
}

// TestParseCase checks the port against the authors' parse_case, case by case; each want is what
// their function returns (worked through its code by hand).
func TestParseCase(t *testing.T) {
	cases := []struct{ in, want, why string }{
		{`[["Kim Park", "person"], ["Tom"]]`, `[['Kim Park', 'person'], ['Tom']]`, "the ordinary answer"},
		{`[["Hal","born","Oslo","Norway"]]`, `[['Hal', 'born', 'Oslo,Norway']]`, "a ',' in a row that holds two items does not end the item"},
		{`[["Hal", "born", "Oslo", "Norway"]]`, `[['Hal', 'born', 'Oslo, Norway']]`, "… and the space after it is kept"},
		{`Triplets: [["Nia", "born in", "Rome"]]`, `[['Triplets: Nia', 'born in', 'Rome']]`, "prose before the list is glued to the first item"},
		{`[["Hal", ["wife"], "Eva"]]`, `[['Hal', ['wife'], 'Eva']]`, "a nested list stays a list"},
		{`[['Blind Shaft', 'director']]`, `[[''Blind Shaft'', ''director'']]`, "single quotes are ordinary characters"},
		{`["Alpha Beta"]`, `['Alpha Beta']`, "a flat list of strings"},
		{`[[Kumbasaram, came out]]`, `[['Kumbasaram', 'came out']]`, "unquoted items"},
		{`[["a\"b", "c\nd", "e\\f"]]`, `[['a"b', 'cnd', 'e\f']]`, "a backslash takes the next character literally"},
		{`[[“Curly”, "x"]]`, `[['Curly', 'x']]`, "curly quotes quote"},
		{`[["a  b", "c"]] trailing`, `[['a  b', 'c']]`, "text after the list is dropped; spaces inside quotes kept"},
		{`[[ "a" ,  "b" ]]`, `[['a', 'b']]`, "spaces around items"},
		{`[["x"]] [["y"]]`, `[['y']]`, "the last top-level list wins"},
		{`[["x", "y"], ["z"`, `[['x', 'y'], ['z']]`, "an unclosed list keeps its pending item"},
		{`[[""], ["b"]]`, `[[], ['b']]`, "an empty string is no item"},
		{`no list here`, `[]`, "no list"},
		{``, `[]`, "empty"},
		{`[]`, `[]`, "an empty list"},
	}
	for _, tc := range cases {
		got, err := ParseCase(tc.in)
		if err != nil {
			t.Errorf("ParseCase(%q): %v", tc.in, err)
			continue
		}
		if s := show(got); s != tc.want {
			t.Errorf("ParseCase(%q) = %s, want %s (%s)", tc.in, s, tc.want, tc.why)
		}
	}
	if _, err := ParseCase(`x]`); err != ErrCaseUnbalanced {
		t.Errorf("text before an unmatched ']' should be the authors' IndexError, got %v", err)
	}
	if got, err := ParseCase(`]`); err != nil || got != nil {
		t.Errorf("a lone ']' with nothing pending is harmless in their code: %v %v", got, err)
	}
}

func FuzzParseCase(f *testing.F) {
	for _, s := range []string{`[["a", "b", "c", "d"]]`, `x [[“y”]]`, `]]][[[`, `"`, `[\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseCase(s) // must not panic
	})
}

// TestAuthorsReading checks what Prompted keeps under ParseAuthors, as the authors' code keeps it.
func TestAuthorsReading(t *testing.T) {
	ents := []struct {
		out      string
		want     []string
		warnings int64
		why      string
	}{
		{`entities: [["Kim Park", "person"], ["Tom"]]`, []string{"Kim Park", "Tom"}, 0, "item[0] of each item"},
		{`[["Alpha Beta"]]`, []string{"Alpha Beta"}, 0, "a one-element row"},
		{`["Alpha Beta", "Gamma"]`, []string{"A", "G"}, 0, "a plain string's item[0] is its first character"},
		{`[["Kumbasaram"], ["kumbasaram"], ["Kumbasaram"]]`, []string{"Kumbasaram", "kumbasaram"}, 0, "dict.fromkeys removes exact repeats only"},
		{`[[""], ["Bo"]]`, nil, 1, "an empty row raises IndexError: nothing extracted"},
		{`[[["x"]], ["Bo"]]`, nil, 1, "a list as item[0] is unhashable: nothing extracted"},
		{`Entities: [["Nia"]]`, []string{"Entities: Nia"}, 0, "only a lower-case 'entities:' prefix is removed"},
		{`none`, nil, 0, "no list: no entities"},
	}
	for _, tc := range ents {
		p, _ := NewPrompted(&fakeGen{out: tc.out}, testTemplates(t), PromptedOptions{})
		got, err := p.Entities(context.Background(), "Q?")
		if err != nil || !reflect.DeepEqual(got, tc.want) || p.Warnings() != tc.warnings {
			t.Errorf("Entities of %q = %q, %v, %d warnings; want %q, %d (%s)", tc.out, got, err, p.Warnings(), tc.want, tc.warnings, tc.why)
		}
	}
	corrected := []struct {
		out      string
		want     []string
		warnings int64
	}{
		{`["Alpha Beta", "Gamma"]`, []string{"Alpha Beta", "Gamma"}, 0},
		{`[[""], ["Bo"], [["x"]]]`, []string{"Bo"}, 2},
	}
	for _, tc := range corrected {
		p, _ := NewPrompted(&fakeGen{out: tc.out}, testTemplates(t), PromptedOptions{Parse: ParseAuthorsCorrected})
		got, err := p.Entities(context.Background(), "Q?")
		if err != nil || !reflect.DeepEqual(got, tc.want) || p.Warnings() != tc.warnings {
			t.Errorf("authors-corrected Entities of %q = %q, %v, %d warnings; want %q, %d", tc.out, got, err, p.Warnings(), tc.want, tc.warnings)
		}
	}
	trs := []struct {
		out      string
		want     []Triplet
		warnings int64
		why      string
	}{
		{`[["Hal","born","Oslo","Norway"]]`, []Triplet{{"Hal", "born", "Oslo,Norway"}}, 0, "four items: the tail joins the rest"},
		{`[["Hal", ["wife"], "Eva"], ["Hal", "born in", "Oslo"]]`, []Triplet{{"Hal", "born in", "Oslo"}}, 1, "a row with a list element is skipped"},
		{`Triplets: [["Nia", "born in", "Rome"]]`, []Triplet{{"Triplets: Nia", "born in", "Rome"}}, 0, "the prefix is glued to the head"},
		{`[["Bo", "director"], ["x"], "s"]`, []Triplet{{Head: "Bo", Relation: "director"}}, 2, "pairs count; a single and a string are skipped"},
		{`x]`, nil, 1, "parse_case raises: nothing extracted"},
	}
	for _, tc := range trs {
		p, _ := NewPrompted(&fakeGen{out: tc.out}, testTemplates(t), PromptedOptions{})
		got, err := p.Triplets(context.Background(), "S.")
		if err != nil || !reflect.DeepEqual(got, tc.want) || p.Warnings() != tc.warnings {
			t.Errorf("Triplets of %q = %v, %v, %d warnings; want %v, %d (%s)", tc.out, got, err, p.Warnings(), tc.want, tc.warnings, tc.why)
		}
	}
}

// TestParseCaseOracle compares ParseCase with the authors' parse_case itself on 3,010 inputs
// (testdata/parse_case_oracle.jsonl: ten fixed answers and 3,000 random strings over brackets,
// commas, both quote kinds, backslashes, Unicode spaces and words; each line holds the input and what
// their function returned, or the exception it raised, computed by running their src/generate_quco.py).
func TestParseCaseOracle(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "parse_case_oracle.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var rec struct {
			In    string          `json:"in"`
			Out   json.RawMessage `json:"out"`
			Error string          `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		n++
		got, err := ParseCase(rec.In)
		if rec.Error != "" {
			if err == nil {
				t.Errorf("ParseCase(%q) = %s, theirs raised %s", rec.In, caseJSON(got), rec.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseCase(%q): %v, theirs returned %s", rec.In, err, rec.Out)
			continue
		}
		var want any
		_ = json.Unmarshal(rec.Out, &want)
		wb, _ := json.Marshal(want)
		if g := caseJSON(got); g != string(wb) {
			t.Errorf("ParseCase(%q) = %s, theirs %s", rec.In, g, wb)
		}
	}
	if n < 3000 {
		t.Fatalf("%d oracle lines, want 3010", n)
	}
}

// caseJSON renders items as the JSON of the Python list parse_case returns.
func caseJSON(items []CaseItem) string {
	var conv func([]CaseItem) []any
	conv = func(its []CaseItem) []any {
		out := make([]any, len(its))
		for i, it := range its {
			if it.IsList {
				out[i] = conv(it.List)
			} else {
				out[i] = it.Str
			}
		}
		return out
	}
	b, _ := json.Marshal(conv(items))
	return string(b)
}
