// Package runner runs RAG methods over datasets from a YAML config: `ragbench run CONFIG.yaml`.
//
// A Config (config.go) names datasets, methods with their settings, the generator, the retrieval
// corpora and indexes, the corpus-statistics source, the extractor and the output directory. Any
// method's sweep lists values of its settings: the Plan (plan.go) is the product of every swept
// setting's values, each point a Cell with a name such as "quco[tau_cooc=5]". A method's settings are
// resolved once, when the config is read (ResolveMethods: each point decoded into the method's
// typed config, validated and built); Expand and the plan use that resolution.
//
// Run (run.go) answers every question of every dataset with every cell in a bounded pool of questions
// in flight. Work is question-major: one worker takes a question and runs each of its cells in plan
// order, through a per-question memo of retrievals, corpus-statistics queries and generator calls, so
// that cells that ask the same thing (a τ_cooc sweep's shared stage-1 counts, retrievals and prompts)
// ask it once, and the memo is dropped with the question (memory stays flat in the number of
// questions). Records (methods.Record plus scores) go to one append-only JSONL file per dataset and
// cell, opened with O_APPEND under an exclusive lock, one write per record, so that a kill -9 loses at
// most the questions in flight; a rerun or --resume does what is missing (failed questions included)
// and, once a cell is complete, its file is rewritten in dataset order with one record per question,
// byte-identical to an uninterrupted run's. Measured times go to a .timings.jsonl file beside it.
//
// Indexes a config needs (BM25 over a corpus file or a dataset's context pool, n-gram indexes) are
// built on demand into a cache directory keyed by the content hash of their inputs and options
// (indexcache.go, typed by IndexKind) and reused by later runs; components.go opens the components
// over them. Shard runs a deterministic slice of every cell; Merge joins shard directories into one
// run and refuses shards of different configs.
//
// It does not implement methods (package methods), open components beyond wiring their configs
// (their own packages), or build rich reports (the reports package reads the run directory).
package runner
