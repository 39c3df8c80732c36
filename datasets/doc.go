// Package datasets defines Example, the one record type for every QA dataset, and loads the datasets from
// the Hugging Face parquet layouts (HotpotQA, 2WikiMultihopQA, NQ-open, PubMedQA, NQ long-document, and
// custom datasets described by a column mapping). It also imports the official release formats into those
// layouts and downloads parquet files from the Hugging Face Hub.
//
// It does not score: metrics does.
package datasets
