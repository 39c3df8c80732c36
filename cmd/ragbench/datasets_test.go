package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/internal/testenv"
)

func TestDatasetsInspect(t *testing.T) {
	path := testenv.Data(t, "hotpotqa/fullwiki/validation-00000-of-00001.parquet")
	out, stderr, code := runCLI(t, "datasets", "inspect", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"rows     500", "context.sentences         list of list of string", "supporting_facts.sent_id  list of int32",
		"answer words", "5a7613c15542994ccc9186bf", "Gesellschaft mit beschränkter Haftung"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = runCLI(t, "datasets", "inspect", "--format", "json", "--limit", "10", path)
	var r datasets.Report
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.Rows != 10 || r.Total != 500 || r.Example.ID != "5a7613c15542994ccc9186bf" {
		t.Fatalf("json report: exit %d, %+v", code, r)
	}
	old, _, _ := runCLI(t, "datasets", "inspect", "--json", "--limit", "10", path)
	if old != out {
		t.Error("the deprecated --json must print what --format json prints")
	}
	_, stderr, code = runCLI(t, "datasets", "inspect", "--json", "--format", "text", path)
	if code != 2 || !strings.Contains(stderr, "disagree") {
		t.Errorf("--json with --format text: exit %d, %q; want a usage error", code, stderr)
	}
}

func TestDatasetsExportSample(t *testing.T) {
	path := testenv.Data(t, "nq_open/validation-00000-of-00001.parquet")
	a, _, code := runCLI(t, "datasets", "export", "--sample", "20", "--seed", "3", path)
	b, _, _ := runCLI(t, "datasets", "export", "--sample", "20", "--seed", "3", path)
	if code != 0 || a != b || strings.Count(a, "\n") != 20 {
		t.Fatalf("exit %d; same output %v; %d lines", code, a == b, strings.Count(a, "\n"))
	}
	var ex datasets.Example
	if err := json.Unmarshal([]byte(strings.SplitN(a, "\n", 2)[0]), &ex); err != nil || ex.Question == "" {
		t.Fatalf("first line: %v %+v", err, ex)
	}
}

func TestDatasetsImportCLI(t *testing.T) {
	raw := testenv.Data(t, "raw/nq_open/NQ-open.dev.jsonl")
	out := filepath.Join(t.TempDir(), "nq.parquet")
	_, stderr, code := runCLI(t, "datasets", "import", "--format", "nq-open", raw, out)
	if code != 0 || !strings.Contains(stderr, "imported 3610 rows") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	a, _, _ := runCLI(t, "datasets", "export", out)
	b, _, _ := runCLI(t, "datasets", "export", testenv.Data(t, "nq_open/validation-00000-of-00001.parquet"))
	if a != b || a == "" {
		t.Fatal("the imported file exports differently from the shipped parquet")
	}
}

func TestDatasetsUsageErrors(t *testing.T) {
	noFolder := filepath.Join(t.TempDir(), "not", "made")
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"inspect needs a spec", []string{"datasets", "inspect"}, 2, "want one argument"},
		{"flags after the spec are flags", []string{"datasets", "inspect", "nq_open", "--limit", "3"}, 0, "3 selected"},
		{"negative limit", []string{"datasets", "inspect", "--limit", "-1", "nq_open"}, 2, "negative"},
		{"half a column mapping", []string{"datasets", "inspect", "--question-col", "q", "x.parquet"}, 2, "--answers-col"},
		{"unknown import format", []string{"datasets", "import", "--from", "squad", "a", "b"}, 2, "unknown --from"},
		{"the old --format name still works", []string{"datasets", "import", "--format", "squad", "a", "b"}, 2, "unknown --from"},
		{"a missing input format is a usage error", []string{"datasets", "import", "a", "b"}, 2, "import needs --from"},
		{"import needs two paths", []string{"datasets", "import", "--from", "nq-open", "a"}, 2, "want IN and OUT"},
		{"missing input file", []string{"datasets", "import", "--from", "nq-open", "/nonexistent/in.jsonl", filepath.Join(t.TempDir(), "o.parquet")}, 1, "/nonexistent/in.jsonl"},
		{"a missing input creates no output folder", []string{"datasets", "import", "--from", "nq-open", "/nonexistent/in.jsonl", filepath.Join(noFolder, "o.parquet")}, 1, "/nonexistent/in.jsonl"},
		{"unknown dataset", []string{"datasets", "inspect", "squad2"}, 1, "unknown dataset"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)", code, tc.code, stderr, tc.want)
			}
		})
	}
	if _, err := os.Stat(noFolder); err == nil {
		t.Errorf("a failed import created %s", noFolder)
	}
}

// fetch against a local server in the Hub's URL layout.
func TestDatasetsFetchCLI(t *testing.T) {
	local := testenv.Data(t, "pubmedqa/pqa_labeled/train-00000-of-00001.parquet")
	b, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	mux := http.NewServeMux()
	mux.HandleFunc("/api/datasets/qiaojin/PubMedQA/tree/main/pqa_labeled", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `[{"type":"file","path":"pqa_labeled/train-00000-of-00001.parquet","size":%d,"lfs":{"oid":"%s","size":%d}}]`, len(b), hex.EncodeToString(sum[:]), len(b))
	})
	mux.HandleFunc("/datasets/qiaojin/PubMedQA/resolve/main/pqa_labeled/train-00000-of-00001.parquet", func(w http.ResponseWriter, r *http.Request) {
		w.Write(b)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	cache := t.TempDir()
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("RAGBENCH_CACHE", cache)
	out, stderr, code := runCLI(t, "datasets", "fetch", "pubmedqa")
	want := filepath.Join(cache, "data", "pubmedqa", "pqa_labeled", "train-00000-of-00001.parquet")
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "downloaded") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	out, _, code = runCLI(t, "datasets", "fetch", "pubmedqa")
	if code != 0 || !strings.Contains(out, "cached") {
		t.Fatalf("second fetch: exit %d, %s", code, out)
	}
}

// TestDatasetsListShowsEveryCopy: a name found in two places is listed twice, each with its row
// count, the first marked as the one used; loading it says which file it read and how many rows.
func TestDatasetsListShowsEveryCopy(t *testing.T) {
	shared := testenv.Data(t, "nq_open/validation-00000-of-00001.parquet")
	mine := t.TempDir()
	// The output's folder is created (docs/datasets.md imports into ~/.cache/ragbench/data/NAME/...).
	out := filepath.Join(mine, "nq_open", "validation-00000-of-00001.parquet")
	if _, stderr, code := runCLI(t, "datasets", "import", "--from", "nq-open", writeNQJSONL(t, 3), out); code != 0 {
		t.Fatalf("import into a folder that does not exist yet: %s", stderr)
	}
	t.Setenv("RAGBENCH_DATA", mine)
	t.Setenv("RAGBENCH_CACHE", t.TempDir())
	list, _, code := runCLI(t, "datasets", "list")
	var rows []string
	for _, line := range strings.Split(list, "\n") {
		if strings.HasPrefix(line, "nq_open ") {
			rows = append(rows, strings.Join(strings.Fields(line), " "))
		}
	}
	if code != 0 || len(rows) != 2 || !strings.Contains(rows[0], "* data 3 "+filepath.Dir(out)) || !strings.Contains(rows[1], " shared ") {
		t.Fatalf("exit %d; nq_open rows %q; want the data copy (3 rows, used) then the shared one:\n%s", code, rows, list)
	}
	n, err := datasets.RowCount([]string{shared})
	if err != nil || !strings.Contains(rows[1], fmt.Sprintf(" %d ", n)) {
		t.Fatalf("shared row %q, want %d rows (%v)", rows[1], n, err)
	}
	_, stderr, _ := runCLI(t, "datasets", "export", "nq_open")
	if !strings.Contains(stderr, "dataset nq_open: 3 rows from "+out) {
		t.Errorf("export does not say what it loaded: %q", stderr)
	}
	_, stderr, _ = runCLI(t, "datasets", "export", "--limit", "2", "nq_open@shared")
	if !strings.Contains(stderr, fmt.Sprintf("dataset nq_open: %d rows from %s, 2 selected", n, shared)) {
		t.Errorf("nq_open@shared does not say it loaded the shared copy: %q", stderr)
	}
}

// writeNQJSONL writes n NQ-open JSONL records and returns the path.
func writeNQJSONL(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "{\"question\": \"question %d\", \"answer\": [\"a%d\"]}\n", i, i)
	}
	p := filepath.Join(t.TempDir(), "nq.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
