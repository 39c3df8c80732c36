package metrics

// ResolveAnswerRule reads a rule as a user gives it: "auto" is the dataset's QuCo-RAG rule
// (DefaultAnswerRule), or fallback for a dataset that has none; anything else is ParseAnswerRule's.
func ResolveAnswerRule(spec, dataset string, fallback AnswerRule) (AnswerRule, error) {
	if spec != "auto" {
		return ParseAnswerRule(spec)
	}
	if r := DefaultAnswerRule(dataset); r != ExtractNone {
		return r, nil
	}
	return fallback, nil
}
