package reports

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ragbench/ragbench/reports/reportstest"
)

var update = flag.Bool("update", false, "rewrite the golden files and the fixture run directories under testdata")

// fixtureSpecs are the fixed run directories under testdata/runs.
var fixtureSpecs = map[string]reportstest.Spec{
	"offline": {
		Generator: OfflineReader,
		Datasets:  []string{"2wikimultihopqa", "hotpotqa", "pubmedqa"},
		Cells:     []string{"wo-rag", "sr-rag", "quco", "quco[window=50]", "quco[window=1000]"},
		Questions: 20,
		Seed:      1,
		Skill:     map[string]float64{"wo-rag": 0.15, "sr-rag": 0.25, "quco": 0.35, "quco[window=50]": 0.4, "quco[window=1000]": 0.3},
		Model:     "allenai/OLMo-2-1124-7B-Instruct",
		Methods: []reportstest.Method{
			{Method: "wo-rag", Paper: table1And8("Wo-RAG", "2wikimultihopqa", "hotpotqa")},
			{Method: "sr-rag", Paper: table1And8("SR-RAG", "2wikimultihopqa", "hotpotqa")},
			{Method: "quco", Paper: table1And8("QuCo-RAG", "2wikimultihopqa", "hotpotqa")},
			{Method: "quco", Sweep: true, Paper: [][4]string{
				{"Sensitivity: window (later version)", "OLMo-2-7B", "2wikimultihopqa", "QuCo-RAG window=50"},
				{"Sensitivity: window (later version)", "OLMo-2-7B", "2wikimultihopqa", "QuCo-RAG window=1000"}}},
		},
	},
	"olmo": {
		Generator: "allenai/OLMo-2-1124-7B-Instruct at http://127.0.0.1:8000/v1",
		Datasets:  []string{"2wikimultihopqa"},
		Cells:     []string{"wo-rag", "sr-rag", "quco"},
		Questions: 20,
		Seed:      2,
		Skill:     map[string]float64{"wo-rag": 0.2, "sr-rag": 0.25, "quco": 0.33},
		Model:     "allenai/OLMo-2-1124-7B-Instruct",
		Methods: []reportstest.Method{
			{Method: "wo-rag", Paper: table1And8("Wo-RAG", "2wikimultihopqa")},
			{Method: "sr-rag", Paper: table1And8("SR-RAG", "2wikimultihopqa")},
			{Method: "quco", Paper: table1And8("QuCo-RAG", "2wikimultihopqa")},
		},
	},
}

// table1And8 names a method's OLMo-2-7B rows of QuCo-RAG Tables 1 and 8 on the datasets.
func table1And8(method string, datasets ...string) [][4]string {
	var out [][4]string
	for _, d := range datasets {
		out = append(out, [4]string{"Table 1", "OLMo-2-7B", d, method}, [4]string{"Table 8 (efficiency)", "OLMo-2-7B", d, method})
	}
	return out
}

// TestFixtureUpToDate checks that testdata/runs is what the fixture specs generate (-update rewrites it).
func TestFixtureUpToDate(t *testing.T) {
	for name, spec := range fixtureSpecs {
		want := filepath.Join("testdata", "runs", name)
		if *update {
			if err := os.RemoveAll(want); err != nil {
				t.Fatal(err)
			}
			if err := reportstest.Write(want, spec); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got := t.TempDir()
		if err := reportstest.Write(got, spec); err != nil {
			t.Fatal(err)
		}
		err := filepath.Walk(got, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(got, p)
			a, _ := os.ReadFile(p)
			b, err := os.ReadFile(filepath.Join(want, rel))
			if err != nil {
				t.Errorf("fixture %s: %v (run go test ./reports -update)", rel, err)
				return nil
			}
			if !bytes.Equal(a, b) {
				t.Errorf("fixture %s/%s differs from its spec (run go test ./reports -update)", name, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func loadFixture(t testing.TB, names ...string) []*Run {
	t.Helper()
	var runs []*Run
	for _, n := range names {
		r, err := LoadRun(context.Background(), filepath.Join("testdata", "runs", n))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	return runs
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./reports -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test ./reports -update to accept):\n%s", name, firstDiff(got, want))
	}
}

func firstDiff(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y []byte
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if !bytes.Equal(x, y) {
			return "line " + itoa(i+1) + ":\n got:  " + string(x) + "\n want: " + string(y)
		}
	}
	return ""
}

func itoa(i int) string { return strconv.Itoa(i) }
