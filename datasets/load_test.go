package datasets

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

// realCase pins facts read once from the shared data files (row count, first and last id, one known
// question with its gold answers).
type realCase struct {
	name      string // dataset name resolved by Load
	file      string // the same data as a file below ../shared/data
	layout    string
	rows      int
	firstID   string
	lastID    string
	row       int // index of the known example
	question  string
	answers   []string
	contexts  int // number of context passages of the known example
	extraTest func(t *testing.T, ex Example)
}

var realCases = []realCase{
	{name: "hotpotqa", file: "hotpotqa/distractor/validation-00000-of-00001.parquet", layout: LayoutHotpotQA, rows: 100,
		firstID: "5a8b57f25542995d1e6f1371", lastID: "5a84c4135542994c784dda31",
		row: 0, question: "Were Scott Derrickson and Ed Wood of the same nationality?", answers: []string{"yes"}, contexts: 10,
		extraTest: func(t *testing.T, ex Example) {
			if ex.Type != "comparison" || ex.Level != "hard" {
				t.Errorf("type/level %q/%q, want comparison/hard", ex.Type, ex.Level)
			}
			want := []SupportingFact{{"Scott Derrickson", 0}, {"Ed Wood", 0}}
			if !reflect.DeepEqual(ex.SupportingFacts, want) {
				t.Errorf("supporting facts %v, want %v", ex.SupportingFacts, want)
			}
			if ex.Contexts[0].Title != "Ed Wood (film)" || len(ex.Contexts[0].Sentences) != 3 {
				t.Errorf("first context %q with %d sentences, want Ed Wood (film) with 3", ex.Contexts[0].Title, len(ex.Contexts[0].Sentences))
			}
		}},
	{name: "hotpotqa-fullwiki", file: "hotpotqa/fullwiki/validation-00000-of-00001.parquet", layout: LayoutHotpotQA, rows: 500,
		firstID: "5a7613c15542994ccc9186bf", lastID: "5a8e942b5542995085b3745c",
		row: 0, question: "VIVA Media AG changed it's name in 2004. What does their new acronym stand for?",
		answers: []string{"Gesellschaft mit beschränkter Haftung"}, contexts: 10},
	{name: "2wikimultihopqa", file: "2wikimultihopqa/dev-00000-of-00001.parquet", layout: Layout2Wiki, rows: 300,
		firstID: "298f23b8088a11ebbd6eac1f6bf848b6", lastID: "2f064e5c0baf11ebab90acde48001122",
		// Row 13 is one of the few with answer_aliases: the canonical answer comes first, then the aliases.
		row: 13, question: "Where did the presenter of Tim Russert (Talk Show) die?",
		answers: []string{"Washington", "Washington D.C.", "Washington, District of Columbia", "DC", "Washington, D.C.",
			"Washington, DC", "District of Columbia", "D.C.", "Washington DC"}, contexts: 10},
	{name: "2wiki", file: "2wikimultihopqa/dev-00000-of-00001.parquet", layout: Layout2Wiki, rows: 300,
		firstID: "298f23b8088a11ebbd6eac1f6bf848b6", lastID: "2f064e5c0baf11ebab90acde48001122",
		row: 0, question: "Which film has the director who was born later, El Extraño Viaje or Love In Pawn?",
		answers: []string{"El Extraño Viaje"}, contexts: 10,
		extraTest: func(t *testing.T, ex Example) {
			if ex.Type != "bridge_comparison" || len(ex.Evidences) != 4 {
				t.Errorf("type %q with %d evidences, want bridge_comparison with 4", ex.Type, len(ex.Evidences))
			}
			want := Triple{"El extraño viaje", "director", "Fernando Fernán Gómez"}
			if ex.Evidences[0] != want {
				t.Errorf("first evidence %v, want %v", ex.Evidences[0], want)
			}
		}},
	{name: "nq_open", file: "nq_open/validation-00000-of-00001.parquet", layout: LayoutNQOpen, rows: 3610,
		firstID: "0", lastID: "3609",
		row: 0, question: "when was the last time anyone was on the moon", answers: []string{"14 December 1972 UTC", "December 1972"}},
	{name: "pubmedqa", file: "pubmedqa/pqa_labeled/train-00000-of-00001.parquet", layout: LayoutPubMedQA, rows: 1000,
		firstID: "21645374", lastID: "17559449",
		row: 0, question: "Do mitochondria play a role in remodelling lace plant leaves during programmed cell death?",
		answers: []string{"yes"}, contexts: 2,
		extraTest: func(t *testing.T, ex Example) {
			if ex.Label != "yes" || ex.Contexts[0].Title != "BACKGROUND" || ex.Contexts[1].Title != "RESULTS" {
				t.Errorf("label %q, context titles %q %q; want yes, BACKGROUND, RESULTS", ex.Label, ex.Contexts[0].Title, ex.Contexts[1].Title)
			}
			if len(ex.LongAnswer) < 100 {
				t.Errorf("long answer %q too short", ex.LongAnswer)
			}
		}},
	{name: "nq_longdoc", file: "nq_longdoc/validation-00000-of-00001.parquet", layout: LayoutNQLongDoc, rows: 109,
		firstID: "nqdoc-0-1", lastID: "nqdoc-20-109",
		row: 0, question: "when did season 2 of handmaid's tale start", answers: []string{"April 25 , 2018"}, contexts: 1,
		extraTest: func(t *testing.T, ex Example) {
			d := ex.Contexts[0]
			if d.Title != "The Handmaid 's Tale ( TV series )" || len(d.Text) < 50000 {
				t.Errorf("document %q of %d bytes, want the Handmaid's Tale page of > 50,000 bytes", d.Title, len(d.Text))
			}
		}},
}

func TestLoadRealData(t *testing.T) {
	for _, tc := range realCases {
		t.Run(tc.name, func(t *testing.T) {
			path := testenv.Data(t, tc.file)
			t.Setenv("RAGBENCH_DATA", filepath.Join(testenv.SharedDir(), "data"))
			byName, err := Load(context.Background(), tc.name, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			byFile, err := Load(context.Background(), path, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			byDir, err := Load(context.Background(), filepath.Dir(path), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(byName.Examples, byFile.Examples) || !reflect.DeepEqual(byName.Examples, byDir.Examples) {
				t.Fatalf("loading by name, file and directory gives different examples")
			}
			ds := byName
			if ds.Layout != tc.layout || byFile.Layout != tc.layout {
				t.Errorf("layout %q (by file %q), want %q", ds.Layout, byFile.Layout, tc.layout)
			}
			if len(ds.Warnings) != 0 {
				t.Errorf("%d warnings on clean data, first: %v", len(ds.Warnings), ds.Warnings[0])
			}
			if len(ds.Examples) != tc.rows || ds.Total != tc.rows {
				t.Fatalf("%d examples (total %d), want %d", len(ds.Examples), ds.Total, tc.rows)
			}
			if got := ds.Examples[0].ID; got != tc.firstID {
				t.Errorf("first id %q, want %q", got, tc.firstID)
			}
			if got := ds.Examples[tc.rows-1].ID; got != tc.lastID {
				t.Errorf("last id %q, want %q", got, tc.lastID)
			}
			ex := ds.Examples[tc.row]
			if ex.Question != tc.question {
				t.Errorf("question %q, want %q", ex.Question, tc.question)
			}
			if !reflect.DeepEqual(ex.Answers, tc.answers) {
				t.Errorf("answers %q, want %q", ex.Answers, tc.answers)
			}
			if len(ex.Contexts) != tc.contexts {
				t.Errorf("%d contexts, want %d", len(ex.Contexts), tc.contexts)
			}
			for i, e := range ds.Examples {
				if e.Question == "" || len(e.Answers) == 0 || e.Dataset != tc.layout {
					t.Fatalf("row %d: empty question or answers, or dataset %q: %+v", i, e.Dataset, e.ID)
				}
			}
			if tc.extraTest != nil {
				tc.extraTest(t, ex)
			}
		})
	}
}

func TestPubMedQALabels(t *testing.T) {
	ds, err := Load(context.Background(), testenv.Data(t, "pubmedqa/pqa_labeled/train-00000-of-00001.parquet"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, ex := range ds.Examples {
		count[ex.Label]++
		if len(ex.Answers) != 1 || ex.Answers[0] != ex.Label {
			t.Fatalf("id %s: answers %q, want the label %q", ex.ID, ex.Answers, ex.Label)
		}
	}
	// The published split: 552 yes, 338 no, 110 maybe.
	want := map[string]int{"yes": 552, "no": 338, "maybe": 110}
	if !reflect.DeepEqual(count, want) {
		t.Errorf("labels %v, want %v", count, want)
	}
}

func Test2WikiAliases(t *testing.T) {
	ds, err := Load(context.Background(), testenv.Data(t, "2wikimultihopqa/dev-00000-of-00001.parquet"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ex := range ds.Examples {
		if len(ex.Answers) > 1 {
			n++
		}
	}
	// 9 of the 300 rows carry answer_aliases.
	if n != 9 {
		t.Errorf("%d examples with aliases, want 9", n)
	}
}
