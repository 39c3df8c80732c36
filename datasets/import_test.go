package datasets

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

func importFile(t *testing.T, format, in string, opts ImportOptions) string {
	t.Helper()
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := filepath.Join(t.TempDir(), "out.parquet")
	if _, err := Import(context.Background(), format, f, in, out, opts); err != nil {
		t.Fatal(err)
	}
	return out
}

func diffExamples(t *testing.T, got, want []Example) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d examples, want %d", len(got), len(want))
	}
	bad := 0
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			if bad < 3 {
				g, _ := json.Marshal(got[i])
				w, _ := json.Marshal(want[i])
				t.Errorf("row %d differs:\n got  %.400s\n want %.400s", i, g, w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d rows differ", bad, len(got))
	}
}

// Importing an official file and loading the result gives the same Examples as the shipped parquet.
func TestImportRoundTrip(t *testing.T) {
	cases := []struct {
		format, raw, parquet string
		reason               string
	}{
		{FormatHotpotQA, "raw/hotpotqa/hotpot_dev_fullwiki_sample.json", "hotpotqa/fullwiki/validation-00000-of-00001.parquet", "the 500 fullwiki rows"},
		{FormatNQOpen, "raw/nq_open/NQ-open.dev.jsonl", "nq_open/validation-00000-of-00001.parquet", "all of NQ-open dev, ids are row indexes"},
		{FormatPubMedQA, "raw/pubmedqa/ori_pqal.json", "pubmedqa/pqa_labeled/train-00000-of-00001.parquet", "the dict order is the Hub's row order"},
	}
	for _, tc := range cases {
		t.Run(tc.format, func(t *testing.T) {
			out := importFile(t, tc.format, testenv.Data(t, tc.raw), ImportOptions{})
			got, err := Load(context.Background(), out, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want, err := Load(context.Background(), testenv.Data(t, tc.parquet), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Layout != want.Layout {
				t.Fatalf("layout %s, want %s", got.Layout, want.Layout)
			}
			diffExamples(t, got.Examples, want.Examples)
		})
	}
}

// 2Wiki's dev.json has no aliases; the shipped parquet has them for 9 rows. Without an aliases file the
// round trip holds up to the aliases; with an id_aliases.json built from the shipped rows it is exact.
func TestImport2WikiRoundTrip(t *testing.T) {
	raw := testenv.Data(t, "raw/2wikimultihopqa/2wiki_dev_sample.json")
	want, err := Load(context.Background(), testenv.Data(t, "2wikimultihopqa/dev-00000-of-00001.parquet"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(context.Background(), importFile(t, Format2Wiki, raw, ImportOptions{}), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stripped := make([]Example, len(want.Examples))
	for i, ex := range want.Examples {
		ex.Answers = ex.Answers[:1]
		stripped[i] = ex
	}
	diffExamples(t, got.Examples, stripped)

	// An id_aliases.json (JSON lines keyed by the answer's Wikidata id) from the shipped parquet's
	// answer_id and answer_aliases columns.
	tb, err := openTable(testenv.Data(t, "2wikimultihopqa/dev-00000-of-00001.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	fr := &frame{t: tb, warn: func(w Warning) { t.Error(w) }}
	aid, _, err := fr.strings("answer_id", true, false)
	if err != nil {
		t.Fatal(err)
	}
	al, _, err := fr.stringLists("answer_aliases", true, false)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	byAnswer := map[string][]string{}
	for i := range aid {
		if len(al[i]) > 0 {
			byAnswer[aid[i]] = al[i]
			line, _ := json.Marshal(map[string]any{"Q_id": aid[i], "aliases": al[i], "demonyms": []string{}})
			fmt.Fprintf(&b, "%s\n", line)
		}
	}
	alPath := filepath.Join(t.TempDir(), "id_aliases.json")
	if err := os.WriteFile(alPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = Load(context.Background(), importFile(t, Format2Wiki, raw, ImportOptions{Aliases: alPath}), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The aliases belong to the answer's Wikidata id, so every row with that answer gets them (the
	// shipped file has them only on the rows where its source had them).
	withAliases := make([]Example, len(stripped))
	for i, ex := range stripped {
		ex.Answers = mergeAnswers(append([]string(nil), ex.Answers...), byAnswer[aid[i]])
		withAliases[i] = ex
	}
	diffExamples(t, got.Examples, withAliases)
	for i := range want.Examples {
		if len(al[i]) > 0 && !reflect.DeepEqual(got.Examples[i].Answers, want.Examples[i].Answers) {
			t.Errorf("row %d: answers %q, want the shipped %q", i, got.Examples[i].Answers, want.Examples[i].Answers)
		}
	}
}
