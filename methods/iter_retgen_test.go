package methods_test

import (
	"os"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/methods/methodtest"
)

// TestIterRetGenScripted runs iter-retgen against a scripted generator and retriever: the counters,
// the queries and a golden of its prompts and trace (testdata/iter-retgen/).
func TestIterRetGenScripted(t *testing.T) {
	set := blLoadSet(t)
	cases := []scripted{
		{name: "two-iterations", method: "iter-retgen",
			replies:   []methodtest.Reply{blReply(" Alpha was directed by Bo."), blReply(" Bo was born in Oslo. So the answer is Oslo.")},
			wantCalls: 2, wantRet: 2, wantQueries: []string{blQuestion, blQuestion + " Alpha was directed by Bo."}, wantAnswer: "Oslo",
			wantKinds: []string{"question", "retrieve", "generate", "retrieve", "generate", "answer"}},
		{name: "three-iterations-completion", method: "iter-retgen", settings: map[string]any{"iterations": 3, "top_k": 2},
			replies:    []methodtest.Reply{blReply(" Bo."), blReply(" Bo, born in Oslo."), blReply(" Oslo.")},
			completion: "Oslo.", wantCalls: 3, wantRet: 3, wantAnswerCalls: 1,
			wantQueries: []string{blQuestion, blQuestion + " Bo.", blQuestion + " Bo, born in Oslo."}, wantAnswer: "Oslo"},
	}
	for _, sc := range cases {
		t.Run(sc.name, func(t *testing.T) { checkScripted(t, set, "iter-retgen", sc) })
	}
}

// TestIterRetGenOneIterationIsSRRAG checks that one iteration asks exactly SR-RAG's prompt.
func TestIterRetGenOneIterationIsSRRAG(t *testing.T) {
	set := blLoadSet(t)
	reply := []methodtest.Reply{blReply(" Bo was born in Oslo. So the answer is Oslo.")}
	_, a, _, errA := runScripted(t, set, scripted{method: "iter-retgen", settings: map[string]any{"iterations": 1}, replies: reply})
	_, b, _, errB := runScripted(t, set, scripted{method: "sr-rag", replies: reply})
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	pa, pb := a.Calls(), b.Calls()
	if len(pa) != 1 || len(pb) != 1 || pa[0].Prompt != pb[0].Prompt {
		t.Errorf("iterations 1 and sr-rag ask different prompts:\n%v\n%v", pa, pb)
	}
}

func TestIterRetGenSettings(t *testing.T) {
	cases := []struct {
		settings map[string]any
		wantErr  string
		why      string
	}{
		{map[string]any{"iterations": 0}, "iterations 0", "at least one round"},
		{map[string]any{"iteration": 2}, `unknown setting "iteration"`, "a misspelt setting is an error naming it"},
		{map[string]any{"top_k": 0}, "top_k 0", "the shared retrieval settings are checked too"},
		{map[string]any{"iterations": 4, "top_k": 5}, "", "a valid setting"},
	}
	for _, c := range cases {
		_, err := methods.New("iter-retgen", c.settings)
		if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%v (%s): error %v, want %q", c.settings, c.why, err, c.wantErr)
		}
	}
}

// TestAddingAMethodDoc checks that docs/adding-a-method.md shows methods/iter_retgen.go and
// configs/iter-retgen.yaml whole, as they are, so that the worked example cannot drift from the code.
func TestAddingAMethodDoc(t *testing.T) {
	doc, err := os.ReadFile("../docs/adding-a-method.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ path, fence string }{
		{"iter_retgen.go", "```go\n"},
		{"../configs/iter-retgen.yaml", "```yaml\n"},
	} {
		src, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(doc), f.fence+string(src)+"```\n") {
			t.Errorf("docs/adding-a-method.md does not show %s as it is: paste the file into its %q block", f.path, strings.TrimSpace(f.fence))
		}
	}
}
