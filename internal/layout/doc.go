// Package layout holds no code: its test enforces the module's import layering, so that no package
// imports one above it and no two folders import each other.
//
// The layers, lowest first (a package may import its own layer and those below it):
//
//	internal/...                   cross-cutting helpers no concept owns
//	harness/text                   tokenizer and normalisers (metrics normalise answers with them)
//	datasets, metrics              examples and their loaders; scoring
//	harness/...                    the shared components: corpus, ngram, retrieval, llm, extract, spans
//	methods/...                    the methods, their prompts and test helpers
//	harness/runner                 plans, runs and resumes methods over datasets
//	reports                        tables, plots and comparisons of runs
//	cmd/...                        the command line
//
// A package's tests (in-package and external) follow the same rule as its code. Folders are the
// concepts: harness/<name>, internal/<name> and cmd/<name>, and each other top-level directory. Imports
// between two folders go one way only, tests included; inside one folder an external test package may
// import the folder's other packages (an interface's Example may use its implementations).
//
// Run it with:
//
//	go test ./internal/layout
package layout
