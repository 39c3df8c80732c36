// Package elastic is the Elasticsearch/OpenSearch retrieval backend: it reproduces the BM25 query of
// DRAGIN, FLARE and QuCo-RAG against an index of DPR passages, and builds such an index from a DPR TSV
// with the bulk API, resumably. With a knn section (Config.KNN) the index also holds each passage's
// embedding (dense_vector / knn_vector) and Dense searches it with the engine's kNN query (HNSW), exactly
// with script_score, or with BM25 and kNN in one request.
//
// The query is exactly the one of DRAGIN's src/retriever.py (a BEIR ElasticSearch patch):
//
//	search_type=dfs_query_then_fetch
//	{"_source": true,
//	 "query": {"multi_match": {"query": Q, "type": "best_fields", "fields": ["title", "txt"], "tie_breaker": 0.5}},
//	 "size": k}
//
// where Q is the query left-truncated to 64 tokens (the last 64 are kept), and each hit's text is
// _source.txt, the passage without its title. DRAGIN truncates with the generator's Hugging Face
// tokenizer (truncation_side="left", add_special_tokens=False, then batch_decode); this package has no
// LLM tokenizer, so by default it counts harness/text word tokens and cuts the original string at the
// first kept token. Config.Truncate plugs in another tokenizer.
//
// It speaks the REST API through net/http rather than the official go-elasticsearch client: the same
// four endpoints (/, _search, _msearch, _bulk) work unchanged on Elasticsearch 7/8 and OpenSearch 1/2,
// whereas the official client refuses servers that are not Elasticsearch, and the retry, timeout and
// error handling wanted here is a few dozen lines.
//
// It does not manage clusters, aliases or snapshots.
package elastic
