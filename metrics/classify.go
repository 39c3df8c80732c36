package metrics

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ragbench/ragbench/harness/text"
)

// PubMedQA labels.
var pubMedQALabels = []string{"yes", "no", "maybe"}

// PubMedQALabel maps an answer to a PubMedQA label: the first of the words yes, no and maybe among the
// SQuAD-normalised tokens of the answer, or "" when there is none (an invalid prediction, which
// counts as its own class in macro-F1, as in scikit-learn).
func PubMedQALabel(answer string) string {
	n := text.NormalizeAnswer(answer)
	for _, w := range strings.Split(n, " ") {
		for _, l := range pubMedQALabels {
			if w == l {
				return l
			}
		}
	}
	return ""
}

// ClassScores are accuracy and macro-F1 over a set of (gold, predicted) labels.
type ClassScores struct {
	N        int     `json:"n"`
	Accuracy float64 `json:"accuracy"`
	MacroF1  float64 `json:"macro_f1"`
	// Labels are the classes averaged over: the union of gold and predicted labels, sorted.
	Labels []string `json:"labels"`
	// F1 is each class's F1, in the order of Labels.
	F1 []float64 `json:"f1"`
}

// Classify computes accuracy and macro-F1 as scikit-learn's accuracy_score and
// f1_score(average="macro") do, which is what the PubMedQA evaluation script calls: the classes are
// the union of the gold and predicted labels, and a class whose precision or recall is undefined
// (0/0) gets 0 for it. It returns an error when gold and pred differ in length.
func Classify(gold, pred []string) (ClassScores, error) {
	if len(gold) != len(pred) {
		return ClassScores{}, fmt.Errorf("classify: %d gold labels but %d predicted labels", len(gold), len(pred))
	}
	s := ClassScores{N: len(gold)}
	if len(gold) == 0 {
		return s, nil
	}
	set := map[string]bool{}
	for i := range gold {
		set[gold[i]] = true
		set[pred[i]] = true
	}
	for l := range set {
		s.Labels = append(s.Labels, l)
	}
	sort.Strings(s.Labels)
	idx := make(map[string]int, len(s.Labels))
	for i, l := range s.Labels {
		idx[l] = i
	}
	gi := make([]int, len(gold))
	pi := make([]int, len(pred))
	for i := range gold {
		gi[i], pi[i] = idx[gold[i]], idx[pred[i]]
	}
	s.Accuracy, s.MacroF1, s.F1 = classCounts(gi, pi, len(s.Labels), nil)
	return s, nil
}

// classCounts computes accuracy, macro-F1 and per-class F1 from label indices, over the rows in
// sample (all rows when sample is nil).
func classCounts(gold, pred []int, k int, sample []int) (acc, macro float64, f1 []float64) {
	tp := make([]int, k)
	ng := make([]int, k)
	np := make([]int, k)
	n, correct := 0, 0
	add := func(i int) {
		n++
		ng[gold[i]]++
		np[pred[i]]++
		if gold[i] == pred[i] {
			tp[gold[i]]++
			correct++
		}
	}
	if sample == nil {
		for i := range gold {
			add(i)
		}
	} else {
		for _, i := range sample {
			add(i)
		}
	}
	if n == 0 {
		return 0, 0, make([]float64, k)
	}
	f1 = make([]float64, k)
	sum := 0.0
	for c := 0; c < k; c++ {
		var p, r float64
		if np[c] > 0 {
			p = float64(tp[c]) / float64(np[c])
		}
		if ng[c] > 0 {
			r = float64(tp[c]) / float64(ng[c])
		}
		if p+r > 0 {
			f1[c] = 2 * p * r / (p + r)
		}
		sum += f1[c]
	}
	return float64(correct) / float64(n), sum / float64(k), f1
}
