package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/internal/testenv"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/methods/methodtest"
	"github.com/ragbench/ragbench/methods/prompts"
)

// TestMemoCountsEveryCall (issue 23 §1.7): a record's counters are those of the method as written.
// QuCo-RAG asks the corpus count of "Ann Lee" three times in one question (a stage-1 entity, then the
// head of a pair in each of two sentences), as the authors' code queries again; the question's memo
// answers the repeats, and the counters still count all three. A second cell of the same question,
// answered wholly from the memo, reports the same counters.
func TestMemoCountsEveryCall(t *testing.T) {
	set, err := prompts.Load(testenv.Reference(t, "quco-rag"))
	if err != nil {
		t.Fatal(err)
	}
	const q = "Who is the father of Ann Lee?"
	s1, s2 := "Ann Lee is a singer.", "Ann Lee lives in Oslo. So the answer is Bob Lee."
	counter := &methodtest.Counter{Counts: map[string]uint64{"Ann Lee": 5000}}
	ext := &methodtest.Extractor{EntitiesOf: map[string][]string{q: {"Ann Lee"}},
		TripletsOf: map[string][]extract.Triplet{s1: {{Head: "Ann Lee", Relation: "occupation"}}, "Ann Lee lives in Oslo.": {{Head: "Ann Lee", Relation: "residence"}}}}
	gen := &methodtest.Generator{Replies: []methodtest.Reply{{Text: s1 + " " + s2}}}
	base := methods.Env{Generator: gen, Retriever: &methodtest.Retriever{}, Counter: counter, Extractor: ext, Prompts: set}
	m, err := methods.New("quco", nil)
	if err != nil {
		t.Fatal(err)
	}
	memo := newMemo()
	var got []methods.Counters
	for cell := 0; cell < 2; cell++ {
		wrapped, _ := memo.wrap(base, "m")
		env, meter := methods.Instrument(wrapped)
		p, err := m.Answer(context.Background(), env, datasets.Example{ID: "1", Dataset: "2wikimultihopqa", Question: q})
		if err != nil {
			t.Fatal(err)
		}
		meter.Fill(&p)
		p.Counters.LLMCacheHits = 0 // depends on the caches; run records leave it out
		got = append(got, p.Counters)
	}
	if n := got[0].NgramQueries; n != 3 {
		t.Errorf("n-gram queries %d, want 3: the method asks for \"Ann Lee\" three times and each is counted", n)
	}
	if n := got[0].ExtractorCalls; n != 3 {
		t.Errorf("extractor calls %d, want 3", n)
	}
	if got[1] != got[0] {
		t.Errorf("the cell answered from the memo reports %+v, the first %+v: counters must not depend on the memo", got[1], got[0])
	}
	if asked := len(counter.Queries()); asked != 1 {
		t.Errorf("the counter was asked %d times (%s), want 1: the memo shares the repeats", asked, strings.Join(counter.Queries(), "; "))
	}
}
