// Package corpus reads retrieval corpora as streams of documents: DPR psgs_w100 TSV, BEIR JSONL
// ({_id, title, text}), Pyserini-style JSONL ({id, contents}) and folders of text files. Readers stream, so a
// 21M-passage file is never held in memory whole. Parquet files with named columns are read by OpenParquet
// (format "parquet", registered through RegisterOpener).
//
// It does not index or search: harness/ngram and harness/retrieval do.
package corpus
