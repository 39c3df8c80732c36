// Package sparse is the learned-sparse expert of the multi-granularity methods: SPLADE-style
// encoders that map a text to weights over a model vocabulary, and an exact inverted index of those
// learned impacts.
//
// TEI speaks Hugging Face text-embeddings-inference's POST /embed_sparse (what SPLADE-v3 is deployed
// with): request {"inputs": [...], "truncate": true}, response one list of {"index", "value"} per
// input; errors {"error", "error_type"} with 413/422 (validation), 424 (backend, e.g. a model that
// is not sparse), 429 (overloaded) and 503 (unhealthy), which the shared transport's policy retries
// (internal/transport, the LLM's and the embeddings client's too). Every vector is checked
// against the declared vocabulary size, and document encodings are cached content-keyed on disk
// (dense.Cache's files, keyed by server, model and text).
//
// Index is the impact index: one posting list per vocabulary entry (document ordinal, impact), the
// score of a document the dot product of the query's and the document's weights, computed exactly
// over the postings of the query's terms (no pruning), ties to the lower ordinal. BM25's postings are
// not reused: they store integer term frequencies under BM25's saturation and length norms, while
// learned impacts are arbitrary floats over word pieces. Build writes the layout Open reads
// (meta.json, docs.jsonl, vectors.bin); SearchRows scores given documents only (the document scope).
//
// It does not cut documents into units (harness/corpus) nor fuse rankings (harness/retrieval/fusion).
package sparse
