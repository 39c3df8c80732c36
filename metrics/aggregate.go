package metrics

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Interval is a point estimate with a confidence interval.
type Interval struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

// Mean returns the arithmetic mean of xs (0 for none).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return stat.Mean(xs, nil)
}

// newRand returns the deterministic generator used by every resampling procedure: PCG seeded with
// (seed, seed XOR a fixed constant).
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// percentiles returns the (1-level)/2 and (1+level)/2 empirical quantiles of xs (sorted in place),
// using gonum's stat.Quantile with the Empirical (inverse of the empirical CDF) rule.
func percentiles(xs []float64, level float64) (lo, hi float64) {
	slices.Sort(xs)
	a := (1 - level) / 2
	return stat.Quantile(a, stat.Empirical, xs, nil), stat.Quantile(1-a, stat.Empirical, xs, nil)
}

// Bootstrap computes the mean of every column of scores (scores[m][i] is metric m of example i)
// with a percentile bootstrap confidence interval at the given level (0.95 for 95%), from b
// resamples of the examples with replacement, seeded for reproducibility. All columns share the same
// resamples. With fewer than two examples or b < 1 the interval collapses to the mean.
//
// Scores take few distinct values (EM and acc are 0/1; F1 is a ratio of small counts), so a
// resample is drawn as multinomial counts over the distinct rows (sequential binomial draws) rather
// than as n indices: the same distribution as drawing n indices, at a cost that grows with the
// number of distinct rows instead of with n. When most rows are distinct, indices are drawn.
func Bootstrap(scores [][]float64, b int, level float64, seed uint64) []Interval {
	out := make([]Interval, len(scores))
	if len(scores) == 0 {
		return out
	}
	n := len(scores[0])
	for m := range scores {
		mean := Mean(scores[m])
		out[m] = Interval{Mean: mean, Lo: mean, Hi: mean}
	}
	if n < 2 || b < 1 {
		return out
	}
	rng := newRand(seed)
	means := make([][]float64, len(scores))
	for m := range means {
		means[m] = make([]float64, b)
	}
	// Group identical rows.
	type group struct {
		vals  []float64
		count int
	}
	var groups []group
	index := map[string]int{}
	key := make([]byte, 0, 8*len(scores))
	for i := 0; i < n && len(groups) <= n/4; i++ {
		key = key[:0]
		for m := range scores {
			key = binary.LittleEndian.AppendUint64(key, math.Float64bits(scores[m][i]))
		}
		g, ok := index[string(key)]
		if !ok {
			g = len(groups)
			index[string(key)] = g
			vals := make([]float64, len(scores))
			for m := range scores {
				vals[m] = scores[m][i]
			}
			groups = append(groups, group{vals: vals})
		}
		groups[g].count++
	}
	sums := make([]float64, len(scores))
	if len(groups) <= n/4 {
		src := rand.NewPCG(seed, seed^0x5851f42d4c957f2d)
		for r := 0; r < b; r++ {
			clear(sums)
			left, leftCount := n, n
			for k, g := range groups {
				var x int
				if k == len(groups)-1 || g.count == leftCount {
					x = left
				} else if left > 0 {
					p := float64(g.count) / float64(leftCount)
					x = int(distuv.Binomial{N: float64(left), P: p, Src: src}.Rand())
				}
				left -= x
				leftCount -= g.count
				for m := range sums {
					sums[m] += float64(x) * g.vals[m]
				}
			}
			for m := range scores {
				means[m][r] = sums[m] / float64(n)
			}
		}
	} else {
		for r := 0; r < b; r++ {
			clear(sums)
			for range n {
				i := rng.IntN(n)
				for m := range scores {
					sums[m] += scores[m][i]
				}
			}
			for m := range scores {
				means[m][r] = sums[m] / float64(n)
			}
		}
	}
	for m := range scores {
		out[m].Lo, out[m].Hi = percentiles(means[m], level)
	}
	return out
}

// BootstrapStat is the percentile bootstrap for any statistic of a sample of n items: stat is called
// with the indices of each resample (and once with nil for the point estimate, meaning all items).
func BootstrapStat(n, b int, level float64, seed uint64, statistic func(sample []int) float64) Interval {
	mean := statistic(nil)
	iv := Interval{Mean: mean, Lo: mean, Hi: mean}
	if n < 2 || b < 1 {
		return iv
	}
	rng := newRand(seed)
	vals := make([]float64, b)
	idx := make([]int, n)
	for r := 0; r < b; r++ {
		for k := range idx {
			idx[k] = rng.IntN(n)
		}
		vals[r] = statistic(idx)
	}
	iv.Lo, iv.Hi = percentiles(vals, level)
	return iv
}

// Paired is the comparison of two systems scored on the same examples.
type Paired struct {
	// Delta is mean(a) - mean(b), with a paired bootstrap confidence interval.
	Delta Interval `json:"delta"`
	// P is the two-sided p-value of the approximate randomization test of "no difference".
	P float64 `json:"p"`
	// Rounds is the number of random sign flips behind P.
	Rounds int `json:"rounds"`
}

// PairedTest compares two systems' per-example scores a and b (same examples, same order). The
// p-value comes from an approximate randomization (permutation) test: in each of rounds rounds
// every example's pair is swapped with probability 1/2, and P = (c+1)/(rounds+1) where c counts the
// rounds whose |mean difference| is at least the observed one (within 1e-12). The interval on the
// difference is a paired percentile bootstrap with b resamples. Both are seeded.
//
// It returns an error when a and b differ in length.
func PairedTest(a, b []float64, rounds, resamples int, level float64, seed uint64) (Paired, error) {
	if len(a) != len(b) {
		return Paired{}, fmt.Errorf("paired test: the two systems have %d and %d scores; they must score the same examples", len(a), len(b))
	}
	n := len(a)
	d := make([]float64, n)
	for i := range a {
		d[i] = a[i] - b[i]
	}
	res := Paired{Rounds: rounds}
	res.Delta = Bootstrap([][]float64{d}, resamples, level, seed)[0]
	if n == 0 {
		res.P = 1
		return res, nil
	}
	obs := math.Abs(sum(d))
	rng := newRand(seed + 1)
	c := 0
	for r := 0; r < rounds; r++ {
		s := 0.0
		for i := 0; i < n; i += 64 {
			bits := rng.Uint64()
			for j := i; j < n && j < i+64; j++ {
				if bits&1 == 1 {
					s -= d[j]
				} else {
					s += d[j]
				}
				bits >>= 1
			}
		}
		if math.Abs(s) >= obs-1e-12 {
			c++
		}
	}
	res.P = float64(c+1) / float64(rounds+1)
	return res, nil
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}
