// Package fusion holds the small pure building blocks that multi-granularity retrieval methods
// (UMG-RAG and its variants) combine: per-(expert, granularity) candidate lists with raw scores,
// reciprocal rank fusion, score normalisations (min-max, softmax with temperature, sum) and normalised
// entropy.
//
// It is not a retriever and decides no policy: methods choose which lists to fuse and how to weigh them.
// Every function is deterministic (ties broken by id) and leaves its inputs unmodified.
package fusion

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ragbench/ragbench/harness/retrieval"
)

// DefaultDepth is the number of candidates kept per list.
const DefaultDepth = 100

// DefaultRRFK is the k constant of reciprocal rank fusion (Cormack et al., 2009).
const DefaultRRFK = 60

// Key names a candidate list: the expert that produced it and the unit granularity (sentences per
// unit; 0 for whole passages or documents).
type Key struct {
	Expert      string `json:"expert"`
	Granularity int    `json:"granularity"`
}

// String returns "expert@g".
func (k Key) String() string { return fmt.Sprintf("%s@%d", k.Expert, k.Granularity) }

// Candidate is one retrieved item with its raw score.
type Candidate struct {
	ID    string  `json:"id"`
	Score float64 `json:"score"`
}

// List is one expert's candidates at one granularity, best first, with raw (unnormalised) scores.
type List struct {
	Key        Key         `json:"key"`
	Candidates []Candidate `json:"candidates"`
}

// FromHits turns retrieval hits into a list, keeping at most depth (DefaultDepth when depth ≤ 0) and
// ordering best first by score (ties by id), whatever order the hits came in.
func FromHits(key Key, hits []retrieval.Hit, depth int) List {
	if depth <= 0 {
		depth = DefaultDepth
	}
	c := make([]Candidate, len(hits))
	for i, h := range hits {
		c[i] = Candidate{ID: h.ID, Score: h.Score}
	}
	sortCandidates(c)
	if len(c) > depth {
		c = c[:depth]
	}
	return List{Key: key, Candidates: c}
}

// collect queries every expert for its top depth candidates and returns one list per key, sorted by key
// (expert, then granularity).
func collect(ctx context.Context, query string, experts map[Key]retrieval.Retriever, depth int) ([]List, error) {
	if depth <= 0 {
		depth = DefaultDepth
	}
	keys := make([]Key, 0, len(experts))
	for k := range experts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
	out := make([]List, 0, len(keys))
	for _, k := range keys {
		hits, err := experts[k].Retrieve(ctx, query, depth)
		if err != nil {
			return nil, fmt.Errorf("fusion: expert %s: %w", k, err)
		}
		out = append(out, FromHits(k, hits, depth))
	}
	return out, nil
}

func keyLess(a, b Key) bool {
	if a.Expert != b.Expert {
		return a.Expert < b.Expert
	}
	return a.Granularity < b.Granularity
}

// sortCandidates orders best first: higher score, then smaller id (equal score and id: equal elements,
// whose order does not matter).
func sortCandidates(c []Candidate) {
	slices.SortFunc(c, func(a, b Candidate) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// rrf fuses lists by reciprocal rank: score(d) = Σ over lists containing d of 1/(k + rank), rank
// 1-based in each list's order. k ≤ 0 means DefaultRRFK. A list that repeats an id counts only its best
// rank. The result is sorted best first, ties by id.
func rrf(lists []List, k float64) []Candidate {
	if k <= 0 {
		k = DefaultRRFK
	}
	score := map[string]float64{}
	for _, l := range lists {
		seen := map[string]bool{}
		for r, c := range l.Candidates {
			if seen[c.ID] {
				continue
			}
			seen[c.ID] = true
			score[c.ID] += 1 / (k + float64(r+1))
		}
	}
	out := make([]Candidate, 0, len(score))
	for id, s := range score {
		out = append(out, Candidate{id, s})
	}
	sortCandidates(out)
	return out
}

// ErrBadScore is returned for NaN or infinite scores, and for negative ones where they make no sense.
var ErrBadScore = errors.New("fusion: bad score")

func checkFinite(s []float64) error {
	for i, x := range s {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%w: score %d is %v", ErrBadScore, i, x)
		}
	}
	return nil
}

// MinMax maps scores linearly onto [0, 1]: (s − min)/(max − min). When all scores are equal (including
// a single score) every one maps to 1: no candidate is worse than the best. Empty in, empty out.
func MinMax(scores []float64) ([]float64, error) {
	if err := checkFinite(scores); err != nil {
		return nil, err
	}
	out := make([]float64, len(scores))
	if len(scores) == 0 {
		return out, nil
	}
	lo, hi := scores[0], scores[0]
	for _, s := range scores {
		lo, hi = math.Min(lo, s), math.Max(hi, s)
	}
	for i, s := range scores {
		if hi == lo {
			out[i] = 1
		} else {
			out[i] = (s - lo) / (hi - lo)
		}
	}
	return out, nil
}

// Softmax returns exp(s/T)/Σ exp(s/T), computed stably (shifted by the maximum). The temperature must
// be positive: small T sharpens towards the best score, large T flattens towards uniform.
func Softmax(scores []float64, temperature float64) ([]float64, error) {
	if !(temperature > 0) || math.IsInf(temperature, 0) {
		return nil, fmt.Errorf("fusion: softmax temperature %v, want a positive finite number", temperature)
	}
	if err := checkFinite(scores); err != nil {
		return nil, err
	}
	out := make([]float64, len(scores))
	if len(scores) == 0 {
		return out, nil
	}
	hi := scores[0]
	for _, s := range scores {
		hi = math.Max(hi, s)
	}
	var z float64
	for i, s := range scores {
		out[i] = math.Exp((s - hi) / temperature)
		z += out[i]
	}
	for i := range out {
		out[i] /= z
	}
	return out, nil
}

// Sum divides non-negative scores by their total so that they sum to 1. All-zero scores become uniform
// (1/n each); negative scores are an error (apply MinMax or Softmax first).
func Sum(scores []float64) ([]float64, error) {
	if err := checkFinite(scores); err != nil {
		return nil, err
	}
	out := make([]float64, len(scores))
	var total float64
	for i, s := range scores {
		if s < 0 {
			return nil, fmt.Errorf("%w: score %d is negative (%v); sum normalisation needs non-negative scores", ErrBadScore, i, s)
		}
		total += s
	}
	for i, s := range scores {
		if total == 0 {
			out[i] = 1 / float64(len(scores))
		} else {
			out[i] = s / total
		}
	}
	return out, nil
}

// Entropy returns the Shannon entropy −Σ pᵢ ln pᵢ (nats) of non-negative weights after dividing them by
// their total, with 0 ln 0 = 0. All-zero weights count as uniform.
func Entropy(weights []float64) (float64, error) {
	p, err := Sum(weights)
	if err != nil {
		return 0, err
	}
	var h float64
	for _, x := range p {
		if x > 0 {
			h -= x * math.Log(x)
		}
	}
	return math.Max(h, 0), nil
}

// normalizedEntropy returns Entropy/ln n in [0, 1]: 0 when all the mass is on one candidate, 1 when it
// is spread evenly. Edge cases, defined: n = 0 and n = 1 give 0 (nothing to be uncertain about); all-zero
// weights give 1 (no candidate is preferred: the uniform case). Negative, NaN or infinite weights are an
// error.
func normalizedEntropy(weights []float64) (float64, error) {
	h, err := Entropy(weights)
	if err != nil {
		return 0, err
	}
	if len(weights) < 2 {
		return 0, nil
	}
	return math.Min(math.Max(h/math.Log(float64(len(weights))), 0), 1), nil
}

// Scores returns the scores of a list's candidates in order.
func (l List) Scores() []float64 {
	s := make([]float64, len(l.Candidates))
	for i, c := range l.Candidates {
		s[i] = c.Score
	}
	return s
}

// Normalizer maps a list's raw scores to comparable ones (MinMax, Sum, or a Softmax closure).
type Normalizer func([]float64) ([]float64, error)

// combSum fuses lists by weighted sums of normalised scores: score(d) = Σ weight(list)·norm(list)(d).
// A missing weight counts as 1. The result is sorted best first, ties by id.
func combSum(lists []List, norm Normalizer, weights map[Key]float64) ([]Candidate, error) {
	score := map[string]float64{}
	for _, l := range lists {
		w := 1.0
		if x, ok := weights[l.Key]; ok {
			w = x
		}
		ns, err := norm(l.Scores())
		if err != nil {
			return nil, fmt.Errorf("fusion: list %s: %w", l.Key, err)
		}
		seen := map[string]bool{}
		for i, c := range l.Candidates {
			if seen[c.ID] {
				continue
			}
			seen[c.ID] = true
			score[c.ID] += w * ns[i]
		}
	}
	out := make([]Candidate, 0, len(score))
	for id, s := range score {
		out = append(out, Candidate{id, s})
	}
	sortCandidates(out)
	return out, nil
}

// WeightedRRF is reciprocal rank fusion with a fixed weight per list: score(d) = Σ over lists
// containing d of w(list)/(k + rank). A missing weight counts as 1; k ≤ 0 means DefaultRRFK. With all
// weights 1 it equals RRF.
func WeightedRRF(lists []List, k float64, weights map[Key]float64) []Candidate {
	if k <= 0 {
		k = DefaultRRFK
	}
	score := map[string]float64{}
	for _, l := range lists {
		w := 1.0
		if x, ok := weights[l.Key]; ok {
			w = x
		}
		seen := map[string]bool{}
		for r, c := range l.Candidates {
			if seen[c.ID] {
				continue
			}
			seen[c.ID] = true
			score[c.ID] += w / (k + float64(r+1))
		}
	}
	out := make([]Candidate, 0, len(score))
	for id, s := range score {
		out = append(out, Candidate{id, s})
	}
	sortCandidates(out)
	return out
}
