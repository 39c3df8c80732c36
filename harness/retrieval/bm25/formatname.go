package bm25

// FormatName is the "format" field of a BM25 index's meta.json; openers that accept several index
// kinds (harness/retrieval/index) tell a BM25 directory by it.
const FormatName = formatName
