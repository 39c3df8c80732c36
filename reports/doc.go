// Package reports turns run directories (runs/NAME/config.yaml, runs/NAME/DATASET/CELL.jsonl and
// CELL.timings.jsonl) into what a researcher reads: the papers' tables (markdown, CSV, LaTeX, JSON,
// HTML) with bootstrap intervals, paired tests and the published numbers side by side; plots
// (gonum/plot, SVG and PNG); a self-contained HTML report with a per-question record browser; and a
// question-by-question comparison of two runs that can gate a pull request. It also prints the score
// table of one predictions file for `ragbench score` (WriteScore).
//
// It reads records; it does not run methods or re-score predictions: the scores are the ones the
// runner stored in each record (metrics.Score's), and every aggregate is a plain mean of them, so a
// table cell equals `ragbench score` on the same predictions.
//
// # Inputs read
//
// A cell's generator is its records' "generator" label (the most common one). From config.yaml the
// reports read: a fallback label for records without one (the first non-empty string of
// generator.label, generator.name, generator.model, llm.label, llm.model), the prices
// (prices.prompt_per_mtok, prices.completion_per_mtok), each methods[] entry's paper: refs (the
// published rows its cells reproduce: the only way a published number is placed, never by names),
// models and llm.model (a cell's planned model), and provenance.questions (the planned questions,
// to flag interrupted runs); compare diffs the whole file. A cell name's "@MODEL" suffix (a run
// sweeping models) is dropped from its table row: each model is a block of rows. Records are
// methods.Record lines; timings are the runner's timing lines (methods.Timing plus shared_ms), joined
// to records by id (a record without a timing line counts as untimed, a timing without a record is a
// warning). Failed records (error set) are counted, never scored.
//
// # Units
//
// Scores (EM, F1, acc, answer recall, AR@5) are shown in percent; #Tok, #Call and #Ret are means
// per question; times are milliseconds per question; money is USD per question.
package reports
