// Package retrieval defines the Retriever interface and Hit type that every retrieval backend returns:
// BM25 (bm25/), exact dense search (dense/), learned sparse search (sparse/, SPLADE through TEI),
// Elasticsearch/OpenSearch (elastic/) and the fusion helpers
// used by the multi-granularity methods. Package index (harness/retrieval/index) opens any of them from
// a config.
//
// It holds no index itself.
package retrieval

import "context"

// Hit is one retrieved document or unit.
type Hit struct {
	// ID is the document (or unit) id.
	ID    string  `json:"id"`
	Title string  `json:"title,omitempty"`
	Text  string  `json:"text"`
	Score float64 `json:"score"`
	// Rank is the 1-based rank in the result list.
	Rank int `json:"rank"`
	// Unit is set on hits from a unit index (sentence windows of documents, harness/corpus.Units):
	// where the unit lies in its document and which parent unit contains it. Nil otherwise, and then
	// absent from JSON.
	Unit *UnitSpan `json:"unit,omitempty"`
}

// UnitSpan places a retrieved unit in its document: the sentence window [Start, End) of document
// DocID at granularity Size, and the id of the parent unit that contains it (empty at and above the
// parent granularity). Parent-promotion methods (UMGP) follow Parent to widen a hit.
type UnitSpan struct {
	DocID string `json:"doc_id"`
	// Size is the granularity in sentences (the last unit of a short document may hold fewer).
	Size int `json:"size"`
	// Start is the unit's first sentence (0-based) and End one past its last.
	Start int `json:"start"`
	End   int `json:"end"`
	// Parent is the id of the containing parent unit.
	Parent string `json:"parent,omitempty"`
}

// Retriever returns the top k hits for a query, best first.
type Retriever interface {
	Retrieve(ctx context.Context, query string, k int) ([]Hit, error)
}

// Scoped is implemented by retrievers that can search within given documents only: a unit index
// searching the units of those documents (the long-document reading setting, where a question is
// asked of its own page). RetrieveIn returns the top k hits among the units of docs, scored as Retrieve
// scores them, best first; a document the index does not hold is an error naming it.
type Scoped interface {
	RetrieveIn(ctx context.Context, query string, k int, docs []string) ([]Hit, error)
}

// Lookuper returns a unit by id. An index opened over a unit index (harness/retrieval/index.Index)
// implements it; parent promotion fetches a hit's Unit.Parent through the parent granularity's index.
type Lookuper interface {
	Lookup(id string) (Hit, error)
}
