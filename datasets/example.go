package datasets

// Example is one question of any dataset, with its gold answers and whatever context the dataset ships.
type Example struct {
	// ID is the dataset's id; datasets without one (NQ-open) use the zero-based row index in file order.
	ID string `json:"id"`
	// Dataset names the dataset the example came from (for example "hotpotqa").
	Dataset  string `json:"dataset,omitempty"`
	Question string `json:"question"`
	// Answers are the gold answers, aliases included; the first is the canonical answer.
	Answers []string `json:"answers"`
	// Type is the question type (HotpotQA: bridge/comparison; 2Wiki: compositional, ...).
	Type string `json:"type,omitempty"`
	// Level is HotpotQA's difficulty level.
	Level string `json:"level,omitempty"`
	// Contexts are the context passages shipped with the question.
	Contexts []Passage `json:"contexts,omitempty"`
	// SupportingFacts are the (title, sentence index) pairs that support the answer.
	SupportingFacts []SupportingFact `json:"supporting_facts,omitempty"`
	// Evidences are 2WikiMultihopQA's (subject, relation, object) evidence triples.
	Evidences []Triple `json:"evidences,omitempty"`
	// Label is a classification label (PubMedQA's final decision yes/no/maybe).
	Label string `json:"label,omitempty"`
	// LongAnswer is PubMedQA's long answer.
	LongAnswer string `json:"long_answer,omitempty"`
}

// Passage is a context passage: a title with either sentences or, for long documents, a text.
type Passage struct {
	Title     string   `json:"title"`
	Sentences []string `json:"sentences,omitempty"`
	// Text holds the passage when it is not split into sentences (long documents, abstracts).
	Text string `json:"text,omitempty"`
}

// SupportingFact names a supporting sentence by its passage title and zero-based sentence index.
type SupportingFact struct {
	Title  string `json:"title"`
	SentID int    `json:"sent_id"`
}

// Triple is a (subject, relation, object) evidence triple.
type Triple struct {
	Subject  string `json:"subject"`
	Relation string `json:"relation"`
	Object   string `json:"object"`
}
