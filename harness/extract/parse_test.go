package extract

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseList(t *testing.T) {
	cases := []struct {
		name, in string
		want     [][]string
		err      bool
	}{
		{"the authors' triple format", `[["Kumbasaram", "released in", "2017"]]`, [][]string{{"Kumbasaram", "released in", "2017"}}, false},
		{"question pairs", `[["Kumbasaram", "came out"], ["Mystery of the 13th Guest", "came out"]]`,
			[][]string{{"Kumbasaram", "came out"}, {"Mystery of the 13th Guest", "came out"}}, false},
		{"entity rows without spaces", `[["Blind Shaft"],["The Mask of Fu Manchu"]]`, [][]string{{"Blind Shaft"}, {"The Mask of Fu Manchu"}}, false},
		{"an empty list is no rows", `[]`, nil, false},
		{"a leading entities: label is skipped", "entities:\n[[\"Heard\"], [\"Buck\"]]", [][]string{{"Heard"}, {"Buck"}}, false},
		{"text after the list is ignored", "[[\"A\", \"r\", \"B\"]]\n\n**Example 15:**\nSentence:", [][]string{{"A", "r", "B"}}, false},
		{"single quotes (Python repr)", `[['Billy'], ['Barak']]`, [][]string{{"Billy"}, {"Barak"}}, false},
		{"an apostrophe inside single quotes stays", `[['Canfield's Diet Chocolate Fudge']]`, [][]string{{"Canfield's Diet Chocolate Fudge"}}, false},
		{"an apostrophe inside double quotes stays", `[["Diane Meyer Simon's husband"]]`, [][]string{{"Diane Meyer Simon's husband"}}, false},
		{"escaped quotes are unescaped", `[["He said \"hi\"", "x"]]`, [][]string{{`He said "hi"`, "x"}}, false},
		{"unicode escapes are decoded", `[["\u00d6gedei Khan"]]`, [][]string{{"Ögedei Khan"}}, false},
		{"bare words are accepted", `[[Kumbasaram, came out]]`, [][]string{{"Kumbasaram", "came out"}}, false},
		{"unquoted numbers are accepted", `[["Kumbasaram", "released in", 2017]]`, [][]string{{"Kumbasaram", "released in", "2017"}}, false},
		{"a trailing comma is allowed", `[["A", "r", "B"],]`, [][]string{{"A", "r", "B"}}, false},
		{"a flat list is one row", `["A", "r", "B"]`, [][]string{{"A", "r", "B"}}, false},
		{"deeper lists are flattened into the row", `[[["A"], "r", ["B"]]]`, [][]string{{"A", "r", "B"}}, false},
		{"a code fence is skipped", "```json\n[[\"A\"]]\n```", [][]string{{"A"}}, false},
		{"empty output is no rows", "  ", nil, false},
		{"none is no rows", "entities: None", nil, false},
		{"prose without a list is an error", "I cannot find entities.", nil, true},
		{"a cut-off list is an error", `[["Kumbasaram", "released`, nil, true},
		{"an unclosed outer list is an error", `[["A"]`, nil, true},
		{"a stray character is an error", `[["A"] x]`, nil, true},
		{"too deep nesting is an error", `[[[[[[[[[["A"]]]]]]]]]]`, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseList(tc.in)
			if (err != nil) != tc.err {
				t.Fatalf("ParseList(%q) error %v, want error %v", tc.in, err, tc.err)
			}
			if !tc.err && !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseList(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseListIncompleteIsMarked(t *testing.T) {
	_, err := ParseList(`[["A", "b"`)
	if !errors.Is(err, ErrIncomplete) {
		t.Fatalf("error %v does not wrap ErrIncomplete", err)
	}
}

// FuzzParseList checks that the parser never panics and that whatever it accepts survives a
// FormatList/ParseList round trip unchanged. Seeds are in testdata/fuzz/FuzzParseList.
func FuzzParseList(f *testing.F) {
	f.Add(`[["A", "r", "B"]]`)
	f.Fuzz(func(t *testing.T, s string) {
		rows, err := ParseList(s)
		if err != nil {
			return
		}
		again, err := ParseList(FormatList(rows))
		if err != nil {
			t.Fatalf("FormatList output %q of %q does not parse: %v", FormatList(rows), s, err)
		}
		if len(rows) == 0 && len(again) == 0 {
			return
		}
		if !reflect.DeepEqual(rows, again) {
			t.Fatalf("round trip of %q: %q became %q", s, rows, again)
		}
	})
}
