package methods

import (
	"context"
	"fmt"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval"
)

// The retrieval scope of UMG-RAG, UMGP-RAG and their baselines (setting "scope"):
//   - "pool" (default): every unit of the corpus (all documents pooled);
//   - "document": only the units of the question's own documents, the long-document reading setting
//     (nq_longdoc: the question's Wikipedia page; HotpotQA and 2Wiki: its ten shipped paragraphs, the
//     distractor setting; PubMedQA: its abstract). The documents are named as corpus.Pool names them
//     (the context titles; PubMedQA the example id), and every retriever must search within documents
//     (retrieval.Scoped, as unit indexes do).
const (
	ScopePool     = "pool"
	ScopeDocument = "document"
)

func checkScope(s string) error {
	if s != ScopePool && s != ScopeDocument {
		return fmt.Errorf("scope %q: want %s or %s", s, ScopePool, ScopeDocument)
	}
	return nil
}

// ScopeDocs returns the ids of the documents a question is asked of (scope "document"); nil for scope
// "pool". An example that ships no document (NQ-open) is an error naming the dataset: scope "document"
// on it would give an empty context.
func ScopeDocs(scope string, ex datasets.Example) ([]string, error) {
	if scope != ScopeDocument {
		return nil, nil
	}
	if ex.Dataset == datasets.LayoutPubMedQA && len(ex.Contexts) > 0 {
		return []string{ex.ID}, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range ex.Contexts {
		t := c.Title
		if ex.Dataset == datasets.LayoutNQLongDoc {
			t = corpus.NQPageTitle(c.Title, c.Text)
		}
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		ds := ex.Dataset
		if ds == "" {
			ds = "this dataset"
		}
		return nil, fmt.Errorf("scope document: question %s of %s ships no document of its own (use scope pool, or a dataset with documents such as nq_longdoc)", ex.ID, ds)
	}
	return out, nil
}

// retrieveScoped runs a retriever over the pool (docs nil) or within docs.
func retrieveScoped(ctx context.Context, r retrieval.Retriever, name, query string, k int, docs []string) ([]retrieval.Hit, error) {
	if docs == nil {
		return r.Retrieve(ctx, query, k)
	}
	sc, ok := r.(retrieval.Scoped)
	if !ok {
		return nil, fmt.Errorf("retriever %s cannot search within a document (scope document needs a unit index)", name)
	}
	return sc.RetrieveIn(ctx, query, k, docs)
}
