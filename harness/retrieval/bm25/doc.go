// Package bm25 is an on-disk inverted index scored with Lucene's BM25, the sparse retriever of the
// harness.
//
// Scoring follows Lucene 8+ (and so Pyserini and Elasticsearch): for each query term
//
//	idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl)),  idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))
//
// summed over the query's tokens (a repeated token counts again). N is the number of documents with at
// least one indexed term, avgdl their mean length, and dl the document's length as Lucene stores it: in one
// byte (SmallFloat.intToByte4), exact below 24 tokens and rounded down to 4 significant bits above. The
// quantisation is reproduced by default so that scores and rankings match Lucene; Params.ExactLength scores
// with exact lengths instead. Defaults are k1 = 0.9 and b = 0.4 (Pyserini's). Scores are computed in float64
// (Lucene uses float32), so they agree with Lucene to about 1e-6 relative.
//
// Analysis (Analyzer) lowercases the tokens of harness/text and drops punctuation; the "english" analyzer
// (the default) also removes the possessive 's, Lucene's English stopwords and applies the Porter stemmer,
// as Elasticsearch's "english" analyzer does. The index covers the title and text as one field, or either
// alone (Fields).
//
// Build streams a corpus with bounded memory: postings are buffered up to a budget, spilled to sorted runs
// (in memory while the budget allows, else in files) and merged. Open memory-maps the files and checks
// their sizes and checksums. Search is MaxScore over bit-packed, block-skippable postings and, for
// frequent terms, bitmaps probed in constant time (postings.go), a window of documents at a time
// (batch.go; document at a time for exact lengths): three or more essential lists are summed term at a
// time over the window (taat.go, scan.go), each document's bound of the non-essential lists comes from
// how many of their bitmaps have it (planes.go), non-essential block lists are scanned once against the
// window's candidates (probescan.go), and frequent terms' tf >= 2 bitmaps skip documents whose tf cannot
// reach the threshold (tfmin.go). A recovered panic in a search (damaged files opened without checksums)
// is reported as a corrupt index only when a file no longer matches its checksum.
// Search is exact: its results equal an exhaustive scorer's (BruteForce).
//
// It is not a general search engine: there are no phrase queries, no updates after the build and no
// per-field weights; harness/retrieval/elastic talks to a real Elasticsearch for those.
package bm25
