// Package corpus reads retrieval corpora as streams of documents: DPR psgs_w100 TSV, BEIR JSONL
// ({_id, title, text}), Pyserini-style JSONL ({id, contents}) and folders of text files. Readers stream, so a
// 21M-passage file is never held in memory whole. Parquet files with named columns are read by OpenParquet
// (format "parquet", registered through RegisterOpener). Pool builds the corpus of a dataset's own contexts
// (HotpotQA/2Wiki paragraphs de-duplicated, PubMedQA abstracts, nq_longdoc pages without NQ markup), and
// Units cuts documents into overlapping windows of 2-32 sentences with links to their parent windows
// (and, at LongSize, into LongRAG's non-overlapping units of about 4K tokens, LongUnits);
// a unit index keeps them in a units sidecar (UnitsFile, JSON Lines without the text) that WriteUnit
// writes and ReadUnits reads.
//
// It does not index or search: harness/ngram and harness/retrieval do.
//
// SourceConfig and OpenSource choose what an index is built from (a corpus file in one of the formats,
// or a dataset's pool) and give fresh readers over it, whole documents (Source.Open) or their units
// with the sidecar records written alongside (Source.Units).
package corpus
