// Package ngram is ragbench's corpus-statistics engine: a suffix-array index over a tokenized corpus that
// answers exact n-gram counts and windowed co-occurrence counts, the two statistics QuCo-RAG uses to
// decide when to retrieve.
//
// What it does:
//   - Build tokenizes a corpus (harness/text, harness/corpus) into u16 or u32 token ids with a stored
//     vocabulary and writes Infini-gram's on-disk layout: per shard N, tokenized.N (little-endian
//     tokens, each document prefixed by the all-ones separator 0xFFFF or 0xFFFFFFFF), table.N (the
//     suffix array: byte offsets into tokenized.N, each ceil(log2(size of tokenized.N)/8) bytes,
//     little-endian, in the byte order of the suffixes of tokenized.N) and offset.N (u64 byte offset
//     of each document's separator), plus manifest.json (sizes and CRC-32C checksums) and vocab.txt.
//     The suffix array comes from an SA-IS over the integer alphabet written here (sais.go), run on
//     ranks that order token ids as their little-endian bytes do.
//   - OpenIndex memory-maps an index (ours, or one made by Infini-gram's indexer, queried by ids) and
//     answers Count, CoOccur, CNF (AND/OR) counts, next-token distributions and unigram counts.
//   - Server speaks Infini-gram's JSON API; Client talks to it (or to api.infini-gram.io); Cache
//     records answers in a JSONL file and reads the QuCo-RAG authors' cache file.
//   - Open builds the Counter a Config describes and returns it as a Source (Close releases it):
//     backend local (Index, Mode exact or infinigram, TokenWidth, Verify, MaxClauseFreq), api
//     (APIURL, APIIndex, MaxClauseFreq) or quco-cache (QuCoCache, replayed offline), with the JSONL
//     Cache in front of local or api when set. In YAML: {backend: local, index: idx/wiki, mode:
//     infinigram, cache: runs/ngram-cache.jsonl}.
//
// Two semantics for AND queries (CNFOptions.Mode):
//   - Exact (default): the number of occurrences of the rarest clause that have, for every other
//     clause, an occurrence starting within the window (|Δ| ≤ window tokens) in the same document; an
//     occurrence never pairs with itself.
//   - InfiniGram: Infini-gram's engine, reproduced: subsampling above max_clause_freq (per shard,
//     contiguous rank windows at mt19937-chosen starts, scaled by an integer factor, approx=true),
//     merging of the nearest match before and after into one span, and dropping spans that contain a
//     separator.
//
// It is not a tokenizer for LLM vocabularies: an Infini-gram index built with the Llama-2 tokenizer
// can be opened and queried by token ids, but text queries need an index built here.
package ngram

var (
	_ Counter = (*Index)(nil)
	_ Counter = Compat{}
	_ Counter = (*Client)(nil)
	_ Counter = (*Cache)(nil)
)
