package methods_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/llm/offline"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/retrieval/bm25"
	"github.com/ragbench/ragbench/internal/testenv"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/metrics"
)

// baselineMethods are the methods of this file's end-to-end tests.
var baselineMethods = []string{"wo-rag", "sr-rag", "fs-rag", "fl-rag", "flare-token", "flare"}

// e2eData is one shared dataset with its retrieval corpus.
type e2eData struct {
	name, file string
	corpus     string // a corpus file; "" pools the dataset's own contexts
}

var e2eSets = []e2eData{
	{"2wikimultihopqa", "2wikimultihopqa/dev-00000-of-00001.parquet", ""},
	{"hotpotqa", "hotpotqa/distractor/validation-00000-of-00001.parquet", ""},
	{"nq_open", "nq_open/validation-00000-of-00001.parquet", "corpus/nq-wiki-passages.tsv"},
	{"pubmedqa", "pubmedqa/pqa_labeled/train-00000-of-00001.parquet", ""},
}

// openE2E loads a dataset and builds a BM25 index over its corpus in a temporary directory.
func openE2E(t *testing.T, d e2eData) (*datasets.Dataset, retrieval.Retriever) {
	t.Helper()
	ctx := context.Background()
	ds, err := datasets.Load(ctx, testenv.Data(t, d.file), datasets.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []corpus.Document
	if d.corpus == "" {
		pool, _ := corpus.Pool(ds.Examples)
		for _, p := range pool {
			docs = append(docs, p.Document)
		}
	} else {
		err := corpus.Each(ctx, testenv.Data(t, d.corpus), "", func(doc corpus.Document) error {
			docs = append(docs, doc)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "bm25")
	if _, err := bm25.BuildDocs(ctx, docs, dir, bm25.Options{MemoryBudget: 64 << 20, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	ix, err := bm25.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ds, ix
}

// e2eN is the number of questions per dataset (RAGBENCH_E2E_N, default 30).
func e2eN(t *testing.T) int {
	if s := os.Getenv("RAGBENCH_E2E_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("RAGBENCH_E2E_N=%q: want a positive integer", s)
		}
		return n
	}
	return 30
}

type e2eSum struct {
	n                   int
	em, f1              float64
	ret, call, tok, ans int
}

// TestBaselinesEndToEnd runs every baseline and both FLARE variants over the first questions of 2Wiki,
// HotpotQA, NQ-open (BM25 over the NQ Wikipedia passages) and PubMedQA with the offline reader and
// BM25, and checks that each question's counters behave as the method implies.
func TestBaselinesEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	set := blLoadSet(t)
	n := e2eN(t)
	reader := offline.New(offline.Options{})
	var table strings.Builder
	fmt.Fprintf(&table, "%-16s %-12s %4s %6s %6s %6s %6s %6s %6s\n", "dataset", "method", "n", "EM", "F1", "#Ret", "#Call", "#Tok", "#Ans")
	for _, d := range e2eSets {
		ds, ix := openE2E(t, d)
		exs := ds.Examples
		if len(exs) > n {
			exs = exs[:n]
		}
		for _, name := range baselineMethods {
			m, err := methods.New(name, nil)
			if err != nil {
				t.Fatal(err)
			}
			var sum e2eSum
			var mu sync.Mutex
			for _, ex := range exs {
				env, meter := methods.Instrument(methods.Env{Generator: reader, GeneratorName: offline.Name, Retriever: ix, Prompts: set})
				p, err := m.Answer(context.Background(), env, ex)
				meter.Fill(&p)
				if err != nil {
					t.Errorf("%s %s %s: %v", d.name, name, ex.ID, err)
					continue
				}
				checkCounters(t, d.name, name, ex, p)
				mu.Lock()
				sum.n++
				sum.em += metrics.ExactMatch(p.Answer, ex.Answers)
				f1, _, _ := metrics.F1(p.Answer, ex.Answers)
				sum.f1 += f1
				sum.ret += p.Counters.Retrievals
				sum.call += p.Counters.Calls
				sum.tok += p.Counters.GeneratedTokens
				sum.ans += p.Counters.AnswerCalls
				mu.Unlock()
			}
			if sum.n == 0 {
				continue
			}
			k := float64(sum.n)
			fmt.Fprintf(&table, "%-16s %-12s %4d %6.1f %6.1f %6.2f %6.2f %6.1f %6.2f\n", d.name, name, sum.n,
				100*sum.em/k, 100*sum.f1/k, float64(sum.ret)/k, float64(sum.call)/k, float64(sum.tok)/k, float64(sum.ans)/k)
		}
	}
	t.Logf("offline reader (no LLM), BM25, first %d questions per dataset:\n%s", n, table.String())
}

// checkCounters checks what each method's counters must satisfy for one question.
func checkCounters(t *testing.T, ds, name string, ex datasets.Example, p methods.Prediction) {
	t.Helper()
	c := p.Counters
	bad := func(rule string) {
		t.Errorf("%s %s %s: counters %+v break %q", ds, name, ex.ID, c, rule)
	}
	switch name {
	case "wo-rag":
		if c.Retrievals != 0 || c.Calls != 1 {
			bad("0 retrievals, 1 call")
		}
	case "sr-rag":
		if c.Retrievals != 1 || c.Calls != 1 {
			bad("1 retrieval, 1 call")
		}
	case "fs-rag", "fl-rag":
		if c.Calls < 1 || c.Retrievals != c.Calls {
			bad("one retrieval before every call")
		}
	case "flare-token":
		// Each round is one call; a trigger adds one retrieval and one regeneration.
		if c.Calls < 1 || c.Calls-c.Retrievals < 1 || c.Calls < 2*c.Retrievals {
			bad("calls = rounds + triggers, retrievals = triggers")
		}
	case "flare":
		// The question's retrieval, then per step a look-ahead and, on a trigger, a retrieval and a
		// regeneration.
		if c.Retrievals < 1 || c.Calls < 1 || c.Calls-(c.Retrievals-1) < 1 || c.Calls < 2*(c.Retrievals-1) {
			bad("1 + triggers retrievals, steps + triggers calls")
		}
	}
	if c.AnswerCalls > 1 {
		bad("at most one answer-completion call")
	}
	if c.AnswerCalls > 0 && (ds == "nq_open" || ds == "pubmedqa") {
		bad("no answer completion without an exemplar set")
	}
	if c.Calls > 0 && c.GeneratedTokens == 0 && p.Raw != "" {
		bad("#Tok counts the generated tokens")
	}
	if (p.Signals["retrieved"] == 1) != (c.Retrievals > 0) {
		bad("signal retrieved is 1 exactly when a retrieval was made")
	}
	if len(p.Trace) == 0 || p.Trace[len(p.Trace)-1].Kind != "answer" {
		bad("the trace ends with the answer")
	}
	if len(p.Retrieved) != c.Retrievals {
		bad("every retrieval is listed")
	}
}
