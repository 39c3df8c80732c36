// Package metrics scores answers exactly as the reference evaluators do (SQuAD, HotpotQA, DRAGIN,
// QuCo-RAG, FlashRAG, DPR, PubMedQA) and aggregates the scores with seeded bootstrap intervals and
// paired tests. It also extracts short answers from chain-of-thought output and reads prediction
// files.
//
// It is not a runner and does no I/O beyond reading a predictions stream: datasets come from
// package datasets, tables are printed by the caller.
//
// # Normalisation
//
// norm(s) = white_space_fix(remove_articles(remove_punc(lower(s)))), the SQuAD v1.1 function with
// Python's semantics (see text.NormalizeAnswer for every detail: Unicode lower-casing, the 32 ASCII
// punctuation characters only, whole-word a/an/the, Python white space). tokens(s) is norm(s) split
// on spaces.
//
// # Answer scores
//
// For a prediction p and the set G of gold answers (aliases included; duplicates after
// normalisation count once):
//
//	EM(p, G)  = max_{g∈G} [norm(p) = norm(g)]
//	acc(p, G) = max_{g∈G} [norm(g) is a substring of norm(p)]     (sub-EM, FlashRAG "acc")
//
// Token F1 uses the multiset intersection c(p, g) = |tokens(p) ∩ tokens(g)| and the HotpotQA/DRAGIN
// special-answer rule: a gold answer g gives 0 when norm(p) ≠ norm(g) and either norm(p) or norm(g)
// is one of yes, no, noanswer; it also gives 0 when c(p, g) = 0. Otherwise
//
//	P(p, g) = c / |tokens(p)|,  R(p, g) = c / |tokens(g)|,  F1(p, g) = 2·P·R / (P + R)
//
// and, as in DRAGIN's and QuCo-RAG's evaluators, each of F1, P and R is maximised over G separately
// (so the reported precision and recall need not come from the gold answer with the best F1):
//
//	F1(p, G) = max_g F1(p, g),  P(p, G) = max_g P(p, g),  R(p, G) = max_g R(p, g)
//
// Edge cases follow the reference code: an empty G scores 0; a gold that normalises to "" gives
// EM 1 only for a prediction that also normalises to "", F1 0 always (no common token), and acc 1
// always (the empty string is a substring of every string).
//
// # Answer recall AR@k (retrieval)
//
// For the first k retrieved passages d_1..d_k (all of them when fewer):
//
//	AR@k = [∃ i ≤ k, g ∈ G : match(d_i, g)]
//
// with two documented match rules:
//
//   - MatchSubstring (FlashRAG retrieval_recall): norm(g) is a substring of norm(d). FlashRAG
//     applies it to a document's "contents" field, which in its corpora is the title in quotes, a
//     newline and the text; pass the passage in whichever form the retriever returns it.
//   - MatchTokens (DPR has_answer, match_type "string", used by DPR and LongRAG): with
//     w(s) = the lower-cased DPR SimpleTokenizer tokens of NFD(s) (text.MatchWords), w(g) occurs as
//     a contiguous run in w(d). An answer with no tokens matches every passage, as in DPR.
//
// RetrievalEval, the one scorer of a question's ranked passages or units (retrieval-eval and
// context-eval), averages AR@k of both rules over examples and, for examples whose gold is known,
// gold recall@k = |gold found in the top k| / |gold| and the share of examples with all of it found.
// The gold (RetrievalGold) names its match rule: GoldByDocument (an item's document id, else its
// title, in a set: HotpotQA/2Wiki supporting-fact titles), GoldByPassage (an item's text, white space
// collapsed, equal to a gold passage's: NQ oracle passages over a passage index; GoldDocsOf gives
// these two) and GoldByCoverage (a gold passage is found when some item's text lies inside it: NQ
// oracle passages over sentence units).
//
// # PubMedQA
//
// The gold label is the example's Label (yes/no/maybe); the predicted label is the first of the
// words yes, no, maybe among tokens(answer), or "" (invalid) when none occurs. With labels L = the
// union of gold and predicted labels (scikit-learn's unique_labels, so an invalid prediction is a
// class of its own) and, per class c, tp_c, predicted count np_c, gold count ng_c:
//
//	accuracy = (1/n) Σ_i [pred_i = gold_i]
//	P_c = tp_c/np_c (0 if np_c = 0), R_c = tp_c/ng_c (0 if ng_c = 0), F1_c = 2P_cR_c/(P_c+R_c) (0 if 0)
//	macro-F1 = (1/|L|) Σ_{c∈L} F1_c
//
// as scikit-learn's accuracy_score and f1_score(average="macro") compute them for the official
// PubMedQA evaluation. A missing prediction is the invalid label "".
//
// # Answer extraction (AnswerRule)
//
// DRAGIN's evaluate.py first cleans the generation: for each of "\nQuestion:", "#10000000", "Note:",
// ". Question:" and the model's end-of-sequence and padding tokens (here "</s>" and
// "<|endoftext|>"), in that order, the text is cut at the marker's first occurrence (Cleanup). Every
// rule below except none applies Cleanup first. The QuCo-RAG repository's evaluate.py is not
// public in the material we could read; it ships DRAGIN's dataset classes with changed
// get_real_prediction methods, so we assume DRAGIN's clean-up before them. DRAGIN also regenerates an
// answer ("... So the answer is ") with the model when the cleaned text lacks "the answer is"; that
// needs the model and belongs to the methods, not to scoring. "After X" below means Python's
// text[text.find(X) + len(X) + 1:], i.e. one character (normally the space) after the phrase is
// skipped.
//
//   - none: the raw output.
//   - dragin-hotpotqa: if "the answer is" occurs, the text after its first occurrence, less a
//     trailing "</s>", then "<|endoftext|>", then one trailing "."; otherwise "".
//   - dragin-2wiki: the same, but the whole (cleaned) output when the phrase is absent.
//   - dragin-iirc: as dragin-hotpotqa, stripping the suffixes "</s>", "<|endoftext|>", "\n", "."
//     once each in that order.
//   - dragin-strategyqa: "yes" if the text after "the answer is" starts with "yes" (any case), else
//     "no"; "" when the phrase is absent.
//   - quco-hotpotqa: if "answer is" occurs, the text after its first occurrence; if that text
//     contains "answer" (any case) it is cut at its first "."; then a trailing "</s>" and
//     "<|endoftext|>" are removed and white space is stripped (a final "." is kept; normalisation
//     drops it). Otherwise "".
//   - quco-2wiki: if "answer is" occurs, the first sentence containing it (QuCo-RAG uses spaCy's
//     sentence splitter; we use text.SplitSentences), the text after the last "answer is" in that
//     sentence, less "</s>" and "<|endoftext|>" suffixes and all trailing "." characters, stripped.
//     Otherwise the whole output.
//
// DefaultAnswerRule picks the QuCo-RAG rule for hotpotqa and 2wikimultihopqa and none elsewhere.
//
// # Aggregates
//
// Every score is reported as its mean over the n examples, with a percentile bootstrap interval:
// B resamples of n examples with replacement (seeded PCG), the statistic computed on each, and the
// (1−level)/2 and (1+level)/2 empirical quantiles (gonum stat.Quantile, stat.Empirical) of the B
// values. All metrics share the same resamples. Bootstrap draws each resample as multinomial counts
// over the distinct score rows, which has the same distribution as drawing n indices. Macro-F1's
// interval recomputes macro-F1 on each resample over the full-sample label set.
//
// PairedTest compares two systems A and B on the same examples with d_i = a_i − b_i:
// Δ = mean(d) with a paired bootstrap interval, and the two-sided approximate randomization p-value
// p = (c + 1)/(R + 1), where in each of R rounds every d_i's sign is flipped with probability 1/2 and
// c counts rounds with |Σ ±d_i| ≥ |Σ d_i|.
package metrics
