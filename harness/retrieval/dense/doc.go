// Package dense is dense retrieval: documents are embedded once by an Embedder, the L2-normalised
// float32 vectors are written to an index directory and memory-mapped on Open, and queries are scored by
// exact inner product, batched through BLAS Sgemm (gonum's pure-Go one, or OpenBLAS through gonum's
// netlib binding when built with -tags openblas), with a top-k heap per query. An index built with
// BuildOptions.Int8 also holds its vectors in int8 (about one byte per dimension); search then scores every
// vector in int8 (AVX-512 VNNI where available) and re-scores the best candidates exactly in float32.
//
// Two embedders are provided: OpenAI (any OpenAI-compatible /v1/embeddings endpoint such as TEI, vLLM,
// Ollama, llama.cpp or OpenAI itself, with batching, instruction prefixes and an on-disk cache; requests go
// through the shared OpenAI-compatible transport, internal/transport, with its retries and concurrency limit)
// and LSA (TF-IDF plus a truncated randomized SVD fitted on the corpus; needs no model and no network).
//
// The package does no approximate search (no IVF or HNSW): every query is compared with every vector, in
// float32 or in int8. For HNSW, use the Elasticsearch/OpenSearch backend (package elastic). It does not split documents into
// units either; feed it units from harness/corpus.
//
// On-disk layout of an index directory (all integers little-endian):
//
//	meta.json    format version, count, dimension, embedder description, size and CRC-32C of every file
//	vectors.f32  count × dim float32, row-major, each row of unit length (or all zero)
//	docs.off     count+1 uint64 offsets into docs.dat
//	docs.dat     per document: uvarint len(id), id, uvarint len(title), title, text
//	lsa.bin      the fitted LSA model, when the index was built with the LSA embedder
//	vectors.u8   the int8 form (BuildOptions.Int8): blocks of 32 rows laid out for the int8 kernel
//	scales.f32   the int8 form's scale of each vector
package dense
