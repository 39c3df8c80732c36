package methods_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/methods"
)

func scopeDocs() []corpus.PoolDoc {
	topics := []string{"volcano", "river", "castle"}
	pairs := []string{"alpha beta", "beta gamma", "gamma alpha"} // each word on two pages, for LSA
	var docs []corpus.PoolDoc
	for i, tp := range topics {
		var sents []string
		for j := 0; j < 300; j++ { // two long units per page (~5,000 tokens)
			// Every page mentions every topic, so that a pool search mixes pages.
			sents = append(sents, fmt.Sprintf("The %s part %d of this page mentions the %s and the %s, %s, half%d.", tp, j, topics[(i+1)%3], topics[(i+2)%3], pairs[i], j/150))
		}
		docs = append(docs, corpus.PoolDoc{Document: corpus.Document{ID: "Page " + tp, Title: "Page " + tp}, Sentences: sents})
	}
	return docs
}

// TestScopeDocument: with scope document every method's context comes from the question's own page
// only (and the experts' trace names it), while the pool scope mixes pages; a question that ships no
// document, and an unknown scope, are errors.
func TestScopeDocument(t *testing.T) {
	ctx := context.Background()
	s := umgBuild(t, scopeDocs(), nil)
	defer s.close()
	ex := datasets.Example{ID: "q", Dataset: datasets.LayoutNQLongDoc, Question: "what does the castle part 7 of this page mention?",
		Contexts: []datasets.Passage{{Title: "Page river"}}}
	for _, name := range umgMethods {
		pool, _ := methods.New(name, nil)
		doc, err := methods.New(name, map[string]any{"scope": "document"})
		if err != nil {
			t.Fatal(err)
		}
		pages := func(m methods.Method, scoped bool) map[string]bool {
			cu, tr, err := m.(methods.Contexter).Context(ctx, s.env(), ex)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(cu) == 0 {
				t.Fatalf("%s: empty context", name)
			}
			out := map[string]bool{}
			for _, u := range cu {
				un, _ := s.bm25.Table.Unit(u.ID)
				out[un.DocID] = true
			}
			for _, e := range tr {
				if e.Kind == "experts" && scoped && strings.Join(e.IDs, ",") != "Page river" {
					t.Errorf("%s: experts event names %v", name, e.IDs)
				}
			}
			return out
		}
		if got := pages(doc, true); len(got) != 1 || !got["Page river"] {
			t.Errorf("%s scope document: context from %v, want Page river only", name, got)
		}
		// The question is about the castle page: the pool scope finds it.
		if got := pages(pool, false); !got["Page castle"] {
			t.Errorf("%s scope pool: context from %v, want Page castle among them", name, got)
		}
		_, _, err = doc.(methods.Contexter).Context(ctx, s.env(), datasets.Example{ID: "n1", Dataset: "nq_open", Question: "who?"})
		if err == nil || !strings.Contains(err.Error(), "ships no document") || !strings.Contains(err.Error(), "nq_open") {
			t.Errorf("%s: scope document without a document: %v", name, err)
		}
		_, _, err = doc.(methods.Contexter).Context(ctx, s.env(), datasets.Example{ID: "n2", Question: "who?", Contexts: []datasets.Passage{{Title: "Page nowhere"}}})
		if err == nil || !strings.Contains(err.Error(), `"Page nowhere"`) {
			t.Errorf("%s: scope document on a page the index lacks: %v", name, err)
		}
		if _, err := methods.New(name, map[string]any{"scope": "page"}); err == nil || !strings.Contains(err.Error(), "scope") {
			t.Errorf("%s: scope page: %v", name, err)
		}
	}
}

// TestRAGContextBudget: a baseline with a context budget skips a unit that does not fit in what is
// left and tries the next, and says so in the trace.
func TestRAGContextBudget(t *testing.T) {
	ctx := context.Background()
	s := umgBuild(t, scopeDocs(), nil)
	defer s.close()
	ex := datasets.Example{ID: "q", Question: "which part mentions the castle and the volcano?"}
	m, err := methods.New("standard-rag", map[string]any{"retrievers": []string{"bm25@32"}, "top_k": 3, "context_budget": 1200})
	if err != nil {
		t.Fatal(err)
	}
	cu, tr, err := m.(methods.Contexter).Context(ctx, s.env(), ex)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, u := range cu {
		un, _ := s.bm25.Table.Unit(u.ID)
		total += un.Tokens
	}
	if len(cu) == 0 || total > 1200 {
		t.Fatalf("%d units of %d tokens within a budget of 1200", len(cu), total)
	}
	var notes []string
	for _, e := range tr {
		if e.Kind == "select" {
			for _, it := range e.Items {
				notes = append(notes, it.Note)
			}
		}
	}
	if !strings.Contains(strings.Join(notes, ","), "skip-budget") {
		t.Errorf("no skip-budget in the trace: %v (three 32-sentence units of ~600 tokens cannot fit in 1200)", notes)
	}
}
