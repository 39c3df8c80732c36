// Package retrieval defines the Retriever interface and Hit type that every retrieval backend returns:
// BM25 (bm25/), exact dense search (dense/), Elasticsearch/OpenSearch (elastic/) and the fusion helpers
// used by the multi-granularity methods.
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
}

// Retriever returns the top k hits for a query, best first.
type Retriever interface {
	Retrieve(ctx context.Context, query string, k int) ([]Hit, error)
}
