package prompts

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/internal/testenv"
)

// writeFakeSet writes a small pair of reference files in the authors' layout (made-up text).
func writeFakeSet(t *testing.T, exemplars, templates string) string {
	t.Helper()
	dir := t.TempDir()
	if exemplars != "" {
		if err := os.WriteFile(filepath.Join(dir, ExemplarsFile), []byte(exemplars), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if templates != "" {
		if err := os.WriteFile(filepath.Join(dir, TemplatesFile), []byte(templates), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const fakeExemplars = `{"demo_input_template": "Q: {question}\nA:", "output_template": "{cot} So the answer is {answer}.",
 "test_input_template": {"toy": "Now Q: {question}\nA:"}, "fewshot_used": {"toy": 1},
 "exemplars": {"toy": [{"question": "q1", "cot": "c1.", "answer": "a1"}, {"question": "q2", "cot": "c2.", "answer": "a2"}]}}`

const fakeTemplates = `{"new_prompt_v1": {"initial": {"context_header": "CTX:\n", "doc_format": "[{index}] {doc}\n", "post_doc": "END\n", "instruction": "INSTR\n"}}}`

func TestBuild(t *testing.T) {
	set, err := Load(writeFakeSet(t, fakeExemplars, fakeTemplates))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, reason string
		opts         Options
		passages     []string
		want         string
	}{
		{"authors-count", "Shots -1 takes fewshot_used and the set's own test input", Options{Exemplars: "toy", Shots: -1}, []string{"p one", "p two"},
			"Q: q1\nA: c1. So the answer is a1.\n\nCTX:\n[1] p one\n[2] p two\nEND\nINSTR\nNow Q: Q?\nA:"},
		{"two-shots", "an explicit count overrides fewshot_used", Options{Exemplars: "toy", Shots: 2}, []string{"p"},
			"Q: q1\nA: c1. So the answer is a1.\n\nQ: q2\nA: c2. So the answer is a2.\n\nCTX:\n[1] p\nEND\nINSTR\nNow Q: Q?\nA:"},
		{"zero-shot", "Shots 0 keeps the set's test input but no exemplars", Options{Exemplars: "toy", Shots: 0}, nil,
			"CTX:\nEND\nINSTR\nNow Q: Q?\nA:"},
		{"no-set", "no exemplar set: the default test input", Options{Shots: -1}, []string{"p"},
			"CTX:\n[1] p\nEND\nINSTR\nQuestion: Q?\nAnswer:"},
	}
	for _, c := range cases {
		b, err := set.Builder(c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := b.Build("Q?", c.passages); got != c.want {
			t.Errorf("%s (%s):\ngot  %q\nwant %q", c.name, c.reason, got, c.want)
		}
	}
}

func TestBuilderErrors(t *testing.T) {
	set, err := Load(writeFakeSet(t, fakeExemplars, fakeTemplates))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		reason string
		opts   Options
		want   string
	}{
		{"an unknown set is named", Options{Exemplars: "nope", Shots: -1}, `no exemplar set "nope"`},
		{"more shots than the set holds", Options{Exemplars: "toy", Shots: 3}, "3 shots asked for, exemplar set \"toy\" has 2"},
		{"shots without a set", Options{Shots: 2}, "no exemplar set chosen"},
	}
	for _, c := range cases {
		_, err := set.Builder(c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.reason, err, c.want)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		reason, exemplars, templates, want string
	}{
		{"missing exemplars file", "", fakeTemplates, ExemplarsFile},
		{"missing templates file", fakeExemplars, "", TemplatesFile},
		{"invalid JSON names the file", `{"demo_input_template": `, fakeTemplates, ExemplarsFile},
		{"missing demo template", `{"output_template": "x"}`, fakeTemplates, `"demo_input_template"`},
		{"empty exemplar", `{"demo_input_template": "Q", "output_template": "A", "exemplars": {"x": [{"question": ""}]}}`, fakeTemplates, "exemplars.x[0]"},
		{"no new_prompt_v1", fakeExemplars, `{"default": {}}`, "new_prompt_v1.initial"},
		{"doc_format without {doc}", fakeExemplars, `{"new_prompt_v1": {"initial": {"doc_format": "[{index}]"}}}`, "{doc}"},
	}
	for _, c := range cases {
		_, err := Load(writeFakeSet(t, c.exemplars, c.templates))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.reason, err, c.want)
		}
	}
}

func TestExemplarSet(t *testing.T) {
	cases := []struct{ dataset, want, reason string }{
		{"hotpotqa-distractor", "hotpotqa", "both HotpotQA settings use the HotpotQA exemplars"},
		{"hotpotqa-fullwiki", "hotpotqa", "both HotpotQA settings use the HotpotQA exemplars"},
		{"2wikimultihopqa", "2wikimultihopqa", "its own set"},
		{"pubmedqa", "", "the authors have no PubMedQA exemplars"},
		{"nq_open", "", "the authors have no NQ exemplars"},
	}
	for _, c := range cases {
		if got := ExemplarSet(c.dataset); got != c.want {
			t.Errorf("%s: got %q, want %q (%s)", c.dataset, got, c.want, c.reason)
		}
	}
}

func TestPassages(t *testing.T) {
	ex := datasets.Example{Contexts: []datasets.Passage{
		{Title: "T", Sentences: []string{"One  two.", " Three."}},
		{Text: "An abstract\twith  spaces."},
		{Text: "Line one.\n\n  \nLine  two.\n"},
	}}
	want := []string{"One two. Three.", "An abstract with spaces.", "Line one.", "Line two."}
	if got := Passages(ex); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q (sentences joined, whitespace collapsed, a long document split into non-empty lines)", got, want)
	}
	if got := Passages(datasets.Example{}); got != nil {
		t.Fatalf("no contexts: got %q, want nil", got)
	}
}

// TestAuthorsFiles loads the real reference files and checks the authors' shot counts and layout.
func TestAuthorsFiles(t *testing.T) {
	set, err := Load(testenv.Reference(t, "quco-rag"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		set   string
		shots int
	}{{"2wikimultihopqa", 6}, {"hotpotqa", 8}} {
		b, err := set.Builder(Options{Exemplars: c.set, Shots: -1})
		if err != nil {
			t.Fatal(err)
		}
		if b.Shots() != c.shots {
			t.Errorf("%s: %d shots, want the authors' %d", c.set, b.Shots(), c.shots)
		}
		p := b.Build("Who?", []string{"Passage A."})
		if strings.Count(p, "So the answer is") < c.shots || !strings.Contains(p, "[1] Passage A.\n") || !strings.HasSuffix(p, "Question: Who?\nAnswer:") {
			t.Errorf("%s: unexpected prompt layout:\n%s", c.set, p)
		}
	}
}
