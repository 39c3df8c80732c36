// Package dense is exact dense retrieval: documents are embedded once by an Embedder, the L2-normalised
// float32 vectors are written to an index directory and memory-mapped on Open, and queries are scored by
// exact inner product, batched through gonum's BLAS Sgemm, with a top-k heap per query.
//
// Two embedders are provided: OpenAI (any OpenAI-compatible /v1/embeddings endpoint such as TEI, vLLM,
// Ollama, llama.cpp or OpenAI itself, with batching, retries, instruction prefixes and an on-disk cache)
// and LSA (TF-IDF plus a truncated randomized SVD fitted on the corpus; needs no model and no network).
//
// The package does not do approximate search (no IVF/HNSW/quantisation): every query is compared with
// every vector, which is what the benchmark's correctness checks want. It does not split documents into
// units either; feed it units from harness/corpus.
//
// On-disk layout of an index directory (all integers little-endian):
//
//	meta.json    format version, count, dimension, embedder description, size and CRC-32C of every file
//	vectors.f32  count × dim float32, row-major, each row of unit length (or all zero)
//	docs.off     count+1 uint64 offsets into docs.dat
//	docs.dat     per document: uvarint len(id), id, uvarint len(title), title, text
//	lsa.bin      the fitted LSA model, when the index was built with the LSA embedder
package dense
