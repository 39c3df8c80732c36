// Package reports prints scored results as tables: the summary of one predictions file (and of a
// baseline it is compared with) in Markdown, CSV, LaTeX or JSON.
//
// It computes nothing: the scores, intervals and paired tests come from package metrics.
package reports
