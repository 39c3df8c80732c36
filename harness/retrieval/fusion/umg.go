package fusion

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// This file holds the arithmetic of UMG-RAG and UMGP-RAG (uncertainty-aware multi-granularity
// retrieval): entropy confidence per (expert, granularity) list, the confidence-weighted mixture, the
// length-penalised ranking R(u) = P(u)/√ℓ(u), UMGP's parent promotion with capped aggregation, and the
// selection of the top k under an overlap rule and a context budget. The paper leaves the
// normalisation, the weight normalisation and the log base open; each is a named option here.

// Normalization names how a list's raw scores become a distribution over its candidates.
type Normalization string

// The normalisations.
const (
	// NormMinMax maps scores onto [0, 1] by min-max (equal scores all map to 1) and divides by their
	// total. It does not depend on the scale of the scores, so BM25 scores (tens) and cosine
	// similarities (below 1) give comparable confidences. The default.
	NormMinMax Normalization = "minmax"
	// NormSoftmax is exp(s/T)/Σ exp(s/T). It depends on the scale of the scores: at T = 1 BM25
	// lists come out far more peaked than cosine lists.
	NormSoftmax Normalization = "softmax"
	// NormSum divides the raw scores by their total; it needs non-negative scores (BM25, or cosines
	// of non-negative embeddings) and returns an error naming the list otherwise.
	NormSum Normalization = "sum"
)

// Weighting names the mixture weights of the lists.
type Weighting string

// The weightings.
const (
	// WeightNormalized uses c/Σc over the lists, so that the fused scores sum to 1. The default.
	WeightNormalized Weighting = "normalized"
	// WeightConfidence uses c itself; the fused scores then sum to Σc. The ranking of UMG is the same
	// as with WeightNormalized (a common factor); UMGP's cap on aggregated scores can bind only here.
	WeightConfidence Weighting = "confidence"
)

// UMGOptions are the open choices of the fusion. The zero value means the defaults.
type UMGOptions struct {
	// Normalization of each list's scores (default NormMinMax).
	Normalization Normalization `json:"normalization"`
	// Temperature of NormSoftmax (default 1).
	Temperature float64 `json:"temperature"`
	// Weights of the mixture (default WeightNormalized).
	Weights Weighting `json:"weights"`
	// LogBase is the base of the logarithms in H = entropy/log(n) (default e). Both logarithms take
	// the same base, so it cancels and the confidences do not depend on it (tested); it is kept as a
	// named option because the paper leaves it open.
	LogBase float64 `json:"log_base"`
}

// Fill sets the defaults of unset fields and checks the options.
func (o *UMGOptions) Fill() error {
	if o.Normalization == "" {
		o.Normalization = NormMinMax
	}
	if o.Temperature == 0 {
		o.Temperature = 1
	}
	if o.Weights == "" {
		o.Weights = WeightNormalized
	}
	if o.LogBase == 0 {
		o.LogBase = math.E
	}
	switch o.Normalization {
	case NormMinMax, NormSoftmax, NormSum:
	default:
		return fmt.Errorf("fusion: normalization %q, want minmax, softmax or sum", o.Normalization)
	}
	switch o.Weights {
	case WeightNormalized, WeightConfidence:
	default:
		return fmt.Errorf("fusion: weights %q, want normalized or confidence", o.Weights)
	}
	if !(o.Temperature > 0) || math.IsInf(o.Temperature, 0) {
		return fmt.Errorf("fusion: temperature %v, want a positive finite number", o.Temperature)
	}
	if !(o.LogBase > 1) || math.IsInf(o.LogBase, 0) {
		return fmt.Errorf("fusion: log base %v, want a finite number above 1", o.LogBase)
	}
	return nil
}

// Distribution normalises scores into a distribution (non-negative, summing to 1) by the option's
// normalisation. Empty in, empty out.
func Distribution(scores []float64, o UMGOptions) ([]float64, error) {
	if len(scores) == 0 {
		return []float64{}, nil
	}
	switch o.Normalization {
	case NormSoftmax:
		return Softmax(scores, o.Temperature)
	case NormSum:
		return Sum(scores)
	}
	p, err := MinMax(scores)
	if err != nil {
		return nil, err
	}
	return Sum(p)
}

// EntropyConfidence returns the normalised entropy H = −Σ p log_b p / log_b n of a distribution over n
// candidates and the confidence c = 1 − H. A single candidate (or none) gives H = 0, c = 1; a uniform
// distribution (all values equal) gives exactly H = 1, c = 0. The result is clamped to [0, 1] against
// rounding.
func EntropyConfidence(p []float64, base float64) (h, c float64) {
	n := len(p)
	if n < 2 {
		return 0, 1
	}
	if slices.Min(p) == slices.Max(p) {
		return 1, 0
	}
	lb := math.Log(base)
	var e float64
	for _, x := range p {
		if x > 0 {
			e -= x * math.Log(x) / lb
		}
	}
	h = e / (math.Log(float64(n)) / lb)
	h = math.Min(math.Max(h, 0), 1)
	return h, 1 - h
}

// PairStat is what the fusion measured for one list.
type PairStat struct {
	Key Key `json:"key"`
	// N is the number of candidates of the list.
	N int `json:"n"`
	// Entropy is the normalised entropy H, Confidence c = 1 − H, Weight the mixture weight.
	Entropy    float64 `json:"entropy"`
	Confidence float64 `json:"confidence"`
	Weight     float64 `json:"weight"`
}

// Fused is the result of Fuse.
type Fused struct {
	// Pairs are the lists' statistics, in the order of the lists given.
	Pairs []PairStat `json:"pairs"`
	// Scores are the units with positive fused mass P(u), best first (ties by id).
	Scores []Candidate `json:"scores"`
	// Fallback is set when every list had confidence 0 (all flat or empty): the weights are then
	// equal (1/m over the m non-empty lists) instead of all zero.
	Fallback bool `json:"fallback,omitempty"`
}

// Fuse computes each list's distribution and entropy confidence, then the confidence-weighted
// mixture P(u) = Σ_lists w·p_list(u), where a list that did not return u contributes 0 and a list
// repeating an id counts only its first (best) occurrence. Units with P(u) = 0 are left out of the
// result (a flat list, whose confidence is 0, therefore changes nothing). Every score must be finite.
func Fuse(lists []List, o UMGOptions) (Fused, error) {
	if err := o.Fill(); err != nil {
		return Fused{}, err
	}
	out := Fused{Pairs: make([]PairStat, len(lists))}
	dists := make([][]float64, len(lists))
	var total float64
	live := 0
	for i, l := range lists {
		p, err := Distribution(l.Scores(), o)
		if err != nil {
			return Fused{}, fmt.Errorf("fusion: list %s: %w", l.Key, err)
		}
		dists[i] = p
		h, c := EntropyConfidence(p, o.LogBase)
		if len(p) == 0 {
			h, c = 0, 0 // an empty list has nothing to say
		} else {
			live++
		}
		out.Pairs[i] = PairStat{Key: l.Key, N: len(p), Entropy: h, Confidence: c}
		total += c
	}
	for i := range out.Pairs {
		ps := &out.Pairs[i]
		switch {
		case total == 0:
			if ps.N > 0 {
				ps.Weight = 1 / float64(live)
			}
		case o.Weights == WeightNormalized:
			ps.Weight = ps.Confidence / total
		default:
			ps.Weight = ps.Confidence
		}
	}
	out.Fallback = total == 0 && live > 0
	// One map lookup per candidate: index into acc, with the list that last added to it (so that a
	// list repeating an id counts its first occurrence only).
	n := 0
	for _, l := range lists {
		n += len(l.Candidates)
	}
	type accum struct {
		id   string
		mass float64
		last int
	}
	pos := make(map[string]int32, n)
	acc := make([]accum, 0, n)
	for i, l := range lists {
		w := out.Pairs[i].Weight
		for j, c := range l.Candidates {
			k, ok := pos[c.ID]
			if !ok {
				k = int32(len(acc))
				pos[c.ID] = k
				acc = append(acc, accum{id: c.ID, last: -1})
			}
			a := &acc[k]
			if a.last == i {
				continue
			}
			a.last = i
			a.mass += w * dists[i][j]
		}
	}
	out.Scores = make([]Candidate, 0, len(acc))
	for _, a := range acc {
		if a.mass > 0 {
			out.Scores = append(out.Scores, Candidate{ID: a.id, Score: a.mass})
		}
	}
	sortCandidates(out.Scores)
	return out, nil
}

// Span locates a unit: its document, its sentence span [Start, End), its granularity, its length in
// tokens, and the id of its parent unit ("" when it has none).
type Span struct {
	ID     string `json:"id"`
	Doc    string `json:"doc"`
	Start  int    `json:"start"`
	End    int    `json:"end"`
	Size   int    `json:"size"`
	Tokens int    `json:"tokens"`
	Parent string `json:"parent,omitempty"`
}

// Lookup returns the span of a unit id.
type Lookup func(id string) (Span, bool)

// Ranked is a unit with its fused mass and its rank score.
type Ranked struct {
	Span
	// P is the fused mass (for a promoted parent, the capped sum of its members').
	P float64 `json:"p"`
	// R = P/√ℓ, ℓ the token length (at least 1).
	R float64 `json:"r"`
	// Members are the fused units a promoted parent stands for (nil for an unpromoted unit).
	Members []string `json:"members,omitempty"`
}

// LengthRank scores each unit by R(u) = P(u)/√ℓ(u), ℓ its token length (taken as 1 when 0), and returns
// the units best first (ties by id). A unit the lookup does not know is an error naming it.
func LengthRank(scores []Candidate, spans Lookup) ([]Ranked, error) {
	out := make([]Ranked, 0, len(scores))
	for _, c := range scores {
		sp, ok := spans(c.ID)
		if !ok {
			return nil, fmt.Errorf("fusion: unit %q has no span (is its granularity's unit table loaded?)", c.ID)
		}
		out = append(out, Ranked{Span: sp, P: c.Score, R: c.Score / math.Sqrt(float64(max(sp.Tokens, 1)))})
	}
	sortRanked(out)
	return out, nil
}

func sortRanked(r []Ranked) {
	slices.SortFunc(r, func(a, b Ranked) int {
		if a.R != b.R {
			return cmp.Compare(b.R, a.R)
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// PromoteOptions configure UMGP's parent promotion. The zero value means the defaults.
type PromoteOptions struct {
	// Sizes are the granularities promoted to their parent (default 2 and 4).
	Sizes []int `json:"promote_sizes"`
	// Cap bounds a parent's aggregated score (default 1).
	Cap float64 `json:"cap"`
}

// Fill sets the defaults and checks the options.
func (o *PromoteOptions) Fill() error {
	if o.Sizes == nil {
		o.Sizes = []int{2, 4}
	}
	if o.Cap == 0 {
		o.Cap = 1
	}
	if !(o.Cap > 0) || math.IsInf(o.Cap, 0) {
		return fmt.Errorf("fusion: cap %v, want a positive finite number", o.Cap)
	}
	return nil
}

// Promotion records one promoted parent.
type Promotion struct {
	Parent string `json:"parent"`
	// Members are the fused units merged into the parent, in fused order (the parent itself first
	// when it was retrieved directly).
	Members []string `json:"members"`
	// Sum is the members' total mass, Score = min(Cap, Sum).
	Sum    float64 `json:"sum"`
	Score  float64 `json:"score"`
	Capped bool    `json:"capped,omitempty"`
}

// Promote replaces every fused unit of a promoted size that has a parent by that parent. The parent's
// score is the sum of the masses of its promoted units and of its own mass when it was fused itself,
// capped at Cap. Units of other sizes, and promoted-size units without a parent, pass through. The
// result is ranked by R = score/√ℓ(parent) (LengthRank) together with the units that passed through;
// the promotions come sorted by parent id.
func Promote(scores []Candidate, spans Lookup, o PromoteOptions) ([]Ranked, []Promotion, error) {
	if err := o.Fill(); err != nil {
		return nil, nil, err
	}
	promote := map[int]bool{}
	for _, g := range o.Sizes {
		promote[g] = true
	}
	parentOf := map[string]string{} // fused unit -> parent it merges into
	spanOf := make(map[string]Span, len(scores))
	for _, c := range scores {
		sp, ok := spans(c.ID)
		if !ok {
			return nil, nil, fmt.Errorf("fusion: unit %q has no span (is its granularity's unit table loaded?)", c.ID)
		}
		spanOf[c.ID] = sp
		if promote[sp.Size] && sp.Parent != "" {
			parentOf[c.ID] = sp.Parent
		}
	}
	groups := map[string]*Promotion{}
	for _, c := range scores {
		p, ok := parentOf[c.ID]
		if !ok {
			continue
		}
		if groups[p] == nil {
			groups[p] = &Promotion{Parent: p}
		}
	}
	// A parent retrieved directly joins its group as a member (first).
	for _, c := range scores {
		if g := groups[c.ID]; g != nil {
			g.Members = append(g.Members, c.ID)
			g.Sum += c.Score
		}
	}
	var pass []Candidate
	for _, c := range scores {
		if p, ok := parentOf[c.ID]; ok {
			g := groups[p]
			g.Members = append(g.Members, c.ID)
			g.Sum += c.Score
			continue
		}
		if groups[c.ID] == nil {
			pass = append(pass, c)
		}
	}
	ranked, err := LengthRank(pass, func(id string) (Span, bool) { sp, ok := spanOf[id]; return sp, ok })
	if err != nil {
		return nil, nil, err
	}
	proms := make([]Promotion, 0, len(groups))
	for _, g := range groups {
		g.Score = math.Min(g.Sum, o.Cap)
		g.Capped = g.Sum > o.Cap
		proms = append(proms, *g)
	}
	sort.Slice(proms, func(i, j int) bool { return proms[i].Parent < proms[j].Parent })
	for _, g := range proms {
		sp, ok := spanOf[g.Parent]
		if !ok {
			sp, ok = spans(g.Parent)
		}
		if !ok {
			return nil, nil, fmt.Errorf("fusion: parent unit %q (of %s) has no span (is the parent granularity's unit table loaded?)", g.Parent, g.Members[0])
		}
		ranked = append(ranked, Ranked{Span: sp, P: g.Score, R: g.Score / math.Sqrt(float64(max(sp.Tokens, 1))), Members: g.Members})
	}
	sortRanked(ranked)
	return ranked, proms, nil
}

// Overlap is the share of the shorter of two spans that the other covers: |A∩B| / min(|A|, |B|) in
// sentences; 0 for spans of different documents or empty spans.
func Overlap(a, b Span) float64 {
	if a.Doc != b.Doc {
		return 0
	}
	n := min(a.End, b.End) - max(a.Start, b.Start)
	m := min(a.End-a.Start, b.End-b.Start)
	if n <= 0 || m <= 0 {
		return 0
	}
	return float64(n) / float64(m)
}

// SelectOptions configure Select. The zero value of K and MaxOverlap means the defaults.
type SelectOptions struct {
	// K is the number of units to select (default 5).
	K int `json:"top_k"`
	// Budget is the context budget in tokens (0: none). A unit longer than what is left is skipped.
	Budget int `json:"context_budget"`
	// MaxOverlap skips a unit that overlaps a selected one by more than this share of the shorter
	// span (Overlap); 1 turns the rule off (no overlap exceeds 1). Default 1.
	MaxOverlap float64 `json:"max_overlap"`
}

// Decision is Select's verdict on one ranked unit.
type Decision struct {
	ID string `json:"id"`
	// Verdict is "select", "skip-overlap" (with the selected unit it overlaps, in With) or
	// "skip-budget".
	Verdict string  `json:"verdict"`
	With    string  `json:"with,omitempty"`
	Overlap float64 `json:"overlap,omitempty"`
}

// Select walks the ranking best first and keeps up to K units, skipping a unit that overlaps a kept
// one by more than MaxOverlap or that does not fit in what is left of the budget. It returns the kept
// units in rank order and a decision for every unit it looked at.
func Select(ranked []Ranked, o SelectOptions) ([]Ranked, []Decision, error) {
	if o.K == 0 {
		o.K = 5
	}
	if o.MaxOverlap == 0 {
		o.MaxOverlap = 1
	}
	if o.K < 0 || o.Budget < 0 || !(o.MaxOverlap > 0 && o.MaxOverlap <= 1) {
		return nil, nil, fmt.Errorf("fusion: select k %d, budget %d, max overlap %v: want k ≥ 0, budget ≥ 0, overlap in (0, 1]", o.K, o.Budget, o.MaxOverlap)
	}
	var kept []Ranked
	var dec []Decision
	used := 0
	for _, r := range ranked {
		if len(kept) == o.K {
			break
		}
		if o.Budget > 0 && used+r.Tokens > o.Budget {
			dec = append(dec, Decision{ID: r.ID, Verdict: "skip-budget"})
			continue
		}
		skip := false
		for _, k := range kept {
			if ov := Overlap(r.Span, k.Span); ov > o.MaxOverlap {
				dec = append(dec, Decision{ID: r.ID, Verdict: "skip-overlap", With: k.ID, Overlap: ov})
				skip = true
				break
			}
		}
		if skip {
			continue
		}
		kept = append(kept, r)
		used += r.Tokens
		dec = append(dec, Decision{ID: r.ID, Verdict: "select"})
	}
	return kept, dec, nil
}

// String formats a decision as "id: verdict" (with the overlapped unit and share when skipped for
// overlap).
func (d Decision) String() string {
	var b strings.Builder
	b.WriteString(d.ID + ": " + d.Verdict)
	if d.With != "" {
		fmt.Fprintf(&b, " (%.2f of %s)", d.Overlap, d.With)
	}
	return b.String()
}
