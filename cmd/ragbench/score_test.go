package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/text"
	"github.com/ragbench/ragbench/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// perturbed is a prediction built from a gold answer and the scores the formulas give it.
type perturbed struct {
	pred         string
	em, f1, acc  float64
	missing      bool
	perturbation string
}

// perturb builds the i-th prediction from a single gold answer. The expected scores are derived from
// the definitions by hand, from the gold's normalised token count, not by calling the scorer.
func perturb(i int, gold string) perturbed {
	norm := text.NormalizeAnswer(gold)
	g := len(strings.Fields(norm))
	special := norm == "yes" || norm == "no" || norm == "noanswer"
	switch i % 8 {
	case 0:
		return perturbed{pred: gold, em: 1, f1: 1, acc: 1, perturbation: "exact"}
	case 1:
		if strings.ToLower(strings.ToUpper(gold)) == strings.ToLower(gold) {
			return perturbed{pred: strings.ToUpper(gold), em: 1, f1: 1, acc: 1, perturbation: "upper case"}
		}
		return perturbed{pred: gold, em: 1, f1: 1, acc: 1, perturbation: "exact"}
	case 2:
		return perturbed{pred: "\"" + gold + "\"!?", em: 1, f1: 1, acc: 1, perturbation: "punctuation"}
	case 3:
		return perturbed{pred: "The " + gold, em: 1, f1: 1, acc: 1, perturbation: "article"}
	case 4:
		// Two extra words: P = g/(g+2), R = 1, F1 = 2g/(2g+2); a yes/no gold then scores F1 0.
		f1 := 2 * float64(g) / float64(2*g+2)
		if special {
			f1 = 0
		}
		return perturbed{pred: gold + " indeed certainly", f1: f1, acc: 1, perturbation: "extra words"}
	case 5:
		// yes/no: a yes/no gold gets the opposite; others get "yes", which scores 0 by the rule.
		if norm == "yes" {
			return perturbed{pred: "no", perturbation: "yes/no flip"}
		}
		if norm == "no" {
			return perturbed{pred: "Yes.", perturbation: "yes/no flip"}
		}
		return perturbed{pred: "yes", perturbation: "yes for a non-yes/no gold"}
	case 6:
		return perturbed{missing: true, perturbation: "missing"}
	}
	return perturbed{pred: "zzzz qqqq", perturbation: "wrong"}
}

// writePredictions writes the perturbed predictions (plus one unknown id) and returns the expected
// means.
func writePredictions(t *testing.T, path string, exs []datasets.Example) (em, f1, acc float64, missing int) {
	t.Helper()
	var b strings.Builder
	for i, ex := range exs {
		p := perturb(i, ex.Answers[0])
		em += p.em / float64(len(exs))
		f1 += p.f1 / float64(len(exs))
		acc += p.acc / float64(len(exs))
		if p.missing {
			missing++
			continue
		}
		line, _ := json.Marshal(map[string]string{"id": ex.ID, "prediction": p.pred})
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteString(`{"id": "not-an-id", "prediction": "stray"}` + "\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "score", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Fatalf("%s differs from the golden file (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestScoreEqualsFormulas scores predictions built from the HotpotQA gold answers with perturbations
// (case, punctuation, articles, extra words, yes/no, missing) and checks the command's figures against
// the formulas, then checks every output format against golden files.
func TestScoreEqualsFormulas(t *testing.T) {
	data := testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet")
	ds, err := datasets.Load(context.Background(), data, datasets.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	golden := t.Name()
	testdata, _ := filepath.Abs("testdata")
	t.Chdir(t.TempDir())
	em, f1, acc, missing := writePredictions(t, "pred.jsonl", ds.Examples)

	out, stderr, code := runCLI(t, "score", "--dataset", data, "--predictions", "pred.jsonl", "--format", "json", "--out", "per.jsonl")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Summary struct {
			N, NMissing, NUnknown int
			EM, F1, Acc           struct{ Mean, Lo, Hi float64 }
		}
	}
	if err := json.Unmarshal([]byte(strings.NewReplacer(`"n_missing"`, `"NMissing"`, `"n_unknown"`, `"NUnknown"`).Replace(out)), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s := rep.Summary
	if s.N != len(ds.Examples) || s.NMissing != missing || s.NUnknown != 1 {
		t.Fatalf("n %d missing %d unknown %d, want %d %d 1", s.N, s.NMissing, s.NUnknown, len(ds.Examples), missing)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"EM", s.EM.Mean, em}, {"F1", s.F1.Mean, f1}, {"acc", s.Acc.Mean, acc}} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %.15f, formulas give %.15f", c.name, c.got, c.want)
		}
	}
	if !strings.Contains(stderr, `1 prediction(s) for ids not in the dataset were not scored (first: "not-an-id")`) {
		t.Errorf("unknown id not reported on stderr: %q", stderr)
	}
	// Per-example records agree with the perturbation table.
	per, err := os.ReadFile("per.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(per)), "\n")
	if len(lines) != len(ds.Examples) {
		t.Fatalf("%d per-example lines, want %d", len(lines), len(ds.Examples))
	}
	for i, l := range lines {
		var r struct {
			EM, F1, Acc float64
			Missing     bool
		}
		json.Unmarshal([]byte(l), &r)
		p := perturb(i, ds.Examples[i].Answers[0])
		if r.EM != p.em || math.Abs(r.F1-p.f1) > 1e-12 || r.Acc != p.acc || r.Missing != p.missing {
			t.Errorf("example %d (%s, gold %q): got %s", i, p.perturbation, ds.Examples[i].Answers[0], l)
		}
	}
	// Golden files for every format.
	for _, f := range []string{"md", "csv", "json", "tex"} {
		out, stderr, code := runCLI(t, "score", "--dataset", data, "--predictions", "pred.jsonl", "--format", f, "--resamples", "200", "--ci-seed", "7")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", f, code, stderr)
		}
		t.Run(f, func(t *testing.T) {
			t.Chdir(filepath.Dir(testdata))
			checkGolden(t, golden+"."+f, out)
		})
	}
}

// TestScorePubMedQA checks accuracy and macro-F1 on the real PubMedQA labels with predictions that
// are right for every third example, "maybe" for the next and missing for the last.
func TestScorePubMedQA(t *testing.T) {
	data := testenv.Data(t, "pubmedqa/pqa_labeled/train-00000-of-00001.parquet")
	ds, err := datasets.Load(context.Background(), data, datasets.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	testdata, _ := filepath.Abs("testdata")
	t.Chdir(t.TempDir())
	var b strings.Builder
	gold := make([]string, len(ds.Examples))
	pred := make([]string, len(ds.Examples))
	for i, ex := range ds.Examples {
		gold[i] = ex.Label
		switch i % 3 {
		case 0:
			pred[i] = ex.Label
			fmt.Fprintf(&b, "{\"id\": %q, \"prediction\": %q}\n", ex.ID, strings.ToUpper(ex.Label)+".")
		case 1:
			pred[i] = "maybe"
			fmt.Fprintf(&b, "{\"id\": %q, \"prediction\": \"Maybe\"}\n", ex.ID)
		}
	}
	os.WriteFile("pred.jsonl", []byte(b.String()), 0o644)
	// Expected values by hand: accuracy and macro-F1 over the classes "", maybe, no, yes.
	acc := 0.0
	classes := []string{"", "maybe", "no", "yes"}
	macro := 0.0
	for _, c := range classes {
		tp, np, ng := 0, 0, 0
		for i := range gold {
			if pred[i] == c {
				np++
			}
			if gold[i] == c {
				ng++
			}
			if pred[i] == c && gold[i] == c {
				tp++
			}
		}
		if np > 0 && ng > 0 && tp > 0 {
			p, r := float64(tp)/float64(np), float64(tp)/float64(ng)
			macro += 2 * p * r / (p + r) / float64(len(classes))
		}
	}
	for i := range gold {
		if gold[i] == pred[i] {
			acc++
		}
	}
	acc /= float64(len(gold))
	out, stderr, code := runCLI(t, "score", "--dataset", data, "--predictions", "pred.jsonl", "--format", "json", "--resamples", "200")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Summary struct {
			Classification struct {
				Accuracy struct{ Mean float64 }
				MacroF1  struct{ Mean float64 } `json:"macro_f1"`
			}
		}
	}
	json.Unmarshal([]byte(out), &rep)
	c := rep.Summary.Classification
	if math.Abs(c.Accuracy.Mean-acc) > 1e-12 || math.Abs(c.MacroF1.Mean-macro) > 1e-12 {
		t.Fatalf("accuracy %v macro-F1 %v, want %v %v", c.Accuracy.Mean, c.MacroF1.Mean, acc, macro)
	}
	md, _, _ := runCLI(t, "score", "--dataset", data, "--predictions", "pred.jsonl", "--resamples", "200")
	t.Chdir(filepath.Dir(testdata))
	checkGolden(t, "TestScorePubMedQA.md", md)
}

func TestScoreBadInput(t *testing.T) {
	data := testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet")
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	dup := write("dup.jsonl", "{\"id\": \"a\", \"prediction\": \"x\"}\n{\"id\": \"a\", \"prediction\": \"y\"}\n")
	bad := write("bad.jsonl", "{\"id\": \"a\", \"prediction\": \"x\"}\n{oops\n")
	good := write("good.jsonl", "{\"id\": \"a\", \"prediction\": \"x\"}\n")
	cases := []struct {
		args    []string
		code    int
		message string
		why     string
	}{
		{[]string{"score", "--predictions", good}, 2, "dataset", "missing --dataset is a usage error"},
		{[]string{"score", "--dataset", data, "--predictions", good, "--format", "xml"}, 2, "--format", "unknown format is a usage error"},
		{[]string{"score", "--dataset", data, "--predictions", good, "--extract", "magic"}, 2, "unknown answer extractor", "unknown extractor is a usage error"},
		{[]string{"score", "--dataset", data, "--predictions", dup}, 1, "dup.jsonl:2: duplicate id \"a\" (first on line 1)", "duplicate prediction ids are an error naming the lines"},
		{[]string{"score", "--dataset", data, "--predictions", bad}, 1, "bad.jsonl:2: not a JSON object", "a corrupt line is an error naming the line"},
		{[]string{"score", "--dataset", data, "--predictions", filepath.Join(dir, "nope.jsonl")}, 1, "no such file", "a missing predictions file is an error"},
		{[]string{"score", "--dataset", filepath.Join(dir, "nope.parquet"), "--predictions", good}, 1, "nope.parquet", "a missing dataset is an error naming it"},
	}
	for _, tc := range cases {
		t.Run(tc.why, func(t *testing.T) {
			_, stderr, code := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.message) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.message)
			}
		})
	}
}

// TestScoreBaseline compares gold answers with a perturbed copy: the paired test must see the gap.
func TestScoreBaseline(t *testing.T) {
	data := testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet")
	ds, err := datasets.Load(context.Background(), data, datasets.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	em, _, _, _ := writePredictions(t, "base.jsonl", ds.Examples)
	var b strings.Builder
	for _, ex := range ds.Examples {
		line, _ := json.Marshal(map[string]string{"id": ex.ID, "prediction": ex.Answers[0]})
		b.Write(line)
		b.WriteByte('\n')
	}
	os.WriteFile("gold.jsonl", []byte(b.String()), 0o644)
	out, stderr, code := runCLI(t, "score", "--dataset", data, "--predictions", "gold.jsonl", "--baseline", "base.jsonl", "--format", "json", "--resamples", "200")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Baseline struct {
			EM struct {
				Delta struct{ Mean, Lo, Hi float64 }
				P     float64
			} `json:"em_vs_baseline"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	d := rep.Baseline.EM
	if math.Abs(d.Delta.Mean-(1-em)) > 1e-12 || d.Delta.Lo <= 0 || d.P > 0.001 {
		t.Fatalf("EM delta %+v p %v, want %v > 0 with p < 0.001", d.Delta, d.P, 1-em)
	}
	md, _, _ := runCLI(t, "score", "--dataset", data, "--predictions", "gold.jsonl", "--baseline", "base.jsonl", "--resamples", "200")
	if !strings.Contains(md, "Paired comparison with base.jsonl") {
		t.Fatalf("markdown lacks the comparison:\n%s", md)
	}
	// The gate: the perturbed file against the gold one is a significant drop of many points.
	gate := []struct {
		args    []string
		code    int
		message string
		why     string
	}{
		{[]string{"--predictions", "base.jsonl", "--baseline", "gold.jsonl", "--fail-on-regression"}, 1, "regression against gold.jsonl: EM -", "a significant drop beyond --max-drop fails the job"},
		{[]string{"--predictions", "base.jsonl", "--baseline", "gold.jsonl"}, 0, "warning: regression against gold.jsonl", "without --fail-on-regression a regression is a warning"},
		{[]string{"--predictions", "base.jsonl", "--baseline", "gold.jsonl", "--fail-on-regression", "--max-drop", "90"}, 0, "no regression", "a drop within --max-drop is no regression"},
		{[]string{"--predictions", "gold.jsonl", "--baseline", "base.jsonl", "--fail-on-regression"}, 0, "no regression", "an improvement is no regression"},
		{[]string{"--predictions", "gold.jsonl", "--fail-on-regression"}, 2, "need --baseline", "the gate without --baseline is a usage error"},
	}
	for _, tc := range gate {
		t.Run(tc.why, func(t *testing.T) {
			_, stderr, code := runCLI(t, append([]string{"score", "--dataset", data, "--resamples", "50"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.message) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.message)
			}
		})
	}
}

// TestScoreWrongDataset: predictions made for another dataset match no id; that must fail and say how
// the dataset's ids are formed, not print all-zero scores.
func TestScoreWrongDataset(t *testing.T) {
	hotpot := testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet")
	nq := testenv.Data(t, "nq_open/validation-00000-of-00001.parquet")
	ds, err := datasets.Load(context.Background(), hotpot, datasets.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nqPreds := write("nq.jsonl", "{\"id\": 0, \"prediction\": \"x\"}\n{\"id\": 1, \"prediction\": \"y\"}\n")
	hotpotPreds := write("hotpot.jsonl", fmt.Sprintf("{\"id\": %q, \"prediction\": \"x\"}\n", ds.Examples[0].ID))
	partial := write("partial.jsonl", fmt.Sprintf("{\"id\": %q, \"prediction\": %q}\n{\"id\": \"stray\", \"prediction\": \"y\"}\n", ds.Examples[0].ID, ds.Examples[0].Answers[0]))
	null := write("null.jsonl", fmt.Sprintf("{\"id\": %q, \"prediction\": null}\n{\"id\": %q, \"prediction\": %q}\n", ds.Examples[0].ID, ds.Examples[1].ID, ds.Examples[1].Answers[0]))
	cases := []struct {
		dataset, preds string
		code           int
		stderr, stdout string
		why            string
	}{
		{hotpot, nqPreds, 1, "none of its 2 prediction id(s) is an id of the dataset", "", "NQ predictions against HotpotQA fail"},
		{hotpot, nqPreds, 1, "ids are its id column", "", "the message says how HotpotQA ids are formed"},
		{nq, hotpotPreds, 1, "ids are zero-based row indices", "", "the message says NQ-open ids are row indices"},
		{hotpot, partial, 0, "1 of 2 prediction ids match", "| 100 | 99 |", "some stray ids: a counted warning, and the rest is scored"},
		{hotpot, null, 0, "1 null prediction(s) count as missing", "| 100 | 99 |", "a null prediction is missing, not an empty answer"},
	}
	_, stderr, _ := runCLI(t, "score", "--quiet", "--dataset", hotpot, "--predictions", partial, "--resamples", "0")
	if strings.Contains(stderr, "note:") || strings.Contains(stderr, "rows from") || !strings.Contains(stderr, "warning:") {
		t.Errorf("--quiet must drop notes and keep warnings: %q", stderr)
	}
	for _, tc := range cases {
		t.Run(tc.why, func(t *testing.T) {
			out, stderr, code := runCLI(t, "score", "--dataset", tc.dataset, "--predictions", tc.preds, "--resamples", "0")
			if !strings.Contains(stderr, " rows from "+tc.dataset) {
				t.Errorf("score does not say which dataset file it read: %q", stderr)
			}
			if code != tc.code || !strings.Contains(stderr, tc.stderr) || !strings.Contains(out, tc.stdout) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, %q and %q", code, out, stderr, tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

func TestScoreNamesTheSystem(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.jsonl")
	rec := `{"id":"5a8b57f25542995d1e6f1371","prediction":"yes","model":"offline reader (no LLM)"}` + "\n"
	if err := os.WriteFile(p, []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Data(t, "hotpotqa/distractor")
	for _, format := range []string{"md", "csv", "json", "tex"} {
		out, stderr, code := runCLI(t, "score", "--dataset", "hotpotqa-distractor", "--predictions", p, "--resamples", "0", "--format", format)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		if !strings.Contains(out, "offline reader (no LLM)") {
			t.Fatalf("%s table does not say the offline reader made the predictions:\n%s", format, out)
		}
	}
}
