package dense

import (
	"context"
	"encoding/binary"
	"math"
	"math/bits"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ragbench/ragbench/harness/retrieval/dense/internal/i8dot"
	"github.com/ragbench/ragbench/internal/mmap"
)

// The int8 search form, written beside vectors.f32 when an index is built with BuildOptions.Int8:
//
//	vectors.u8   the vectors quantised to int8 with one scale per vector (max |x| / 127), stored as
//	             x/scale + 128 (unsigned) in blocks of 32 rows: for each group of 4 dimensions, the 4 bytes
//	             of rows 0–15, then those of rows 16–31 (64 bytes each). Dimensions are padded to a
//	             multiple of 4 and the last block to 32 rows with 128 (zero). Bytes per vector: dim
//	             rounded up to 4.
//	scales.f32   count float32 scales
//
// Search scores every vector in int8 (exact inner products of the quantised vectors, through AVX-512
// VNNI where the CPU has it), keeps the best Rescore candidates per query, and re-scores those in float32
// from the memory-mapped vectors.f32: the returned scores are exact, only the candidate set is chosen in
// int8.
const (
	codesFile = "vectors.u8"
	scalesU8  = "scales.f32"

	// Quantization values recorded in meta.json.
	QuantInt8 = "int8"

	tileRows    = i8dot.Rows    // rows per block of vectors.u8 and per kernel call
	tileQueries = i8dot.Queries // queries per kernel call

	// DefaultRescore is the number of int8 candidates per query re-scored in float32.
	DefaultRescore = 100
)

func padDim(dim int) int { return (dim + 3) &^ 3 }

// codesSize is the size of vectors.u8 for count vectors of dimension dim.
func codesSize(count, dim int) int64 {
	blocks := (int64(count) + tileRows - 1) / tileRows
	return blocks * tileRows * int64(padDim(dim))
}

// quantWriter writes vectors.u8 and scales.f32 as unit vectors arrive.
type quantWriter struct {
	dim, steps int
	codes      *countingWriter
	scales     *countingWriter
	blk        []byte
	n          int // rows in blk
}

func newQuantWriter(dim int, codes, scales *countingWriter) *quantWriter {
	w := &quantWriter{dim: dim, steps: padDim(dim) / 4, codes: codes, scales: scales}
	w.blk = make([]byte, w.steps*128)
	w.reset()
	return w
}

func (w *quantWriter) reset() {
	for i := range w.blk {
		w.blk[i] = 128
	}
	w.n = 0
}

// quantize returns v's scale and writes its codes x/scale (rounded, in [-127, 127]) through put.
func quantize(v []float32, put func(i int, c int8)) float32 {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	if m == 0 {
		return 0
	}
	s := m / 127
	inv := 1 / s
	for i, x := range v {
		c := math.Round(float64(x * inv))
		put(i, int8(max(-127, min(127, c))))
	}
	return s
}

func (w *quantWriter) add(v []float32) error {
	r := w.n
	base := (r/16)*64 + (r%16)*4
	s := quantize(v, func(i int, c int8) { w.blk[(i/4)*128+base+i%4] = byte(int(c) + 128) })
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], math.Float32bits(s))
	if _, err := w.scales.Write(b[:]); err != nil {
		return err
	}
	w.n++
	if w.n == tileRows {
		if _, err := w.codes.Write(w.blk); err != nil {
			return err
		}
		w.reset()
	}
	return nil
}

func (w *quantWriter) finish() error {
	if w.n == 0 {
		return nil
	}
	_, err := w.codes.Write(w.blk)
	w.reset()
	return err
}

// int8Index is the memory-mapped int8 form of an index.
type int8Index struct {
	codes  []byte
	scales []float32
	steps  int
}

// queryGroups quantises nq unit queries (row-major, dimension dim) into kernel groups of 8 (padded with
// zero queries) and returns them with each query's correction 128·Σ codes, the part of the kernel's sum
// that the +128 offset of the stored codes adds.
func (q *int8Index) queryGroups(qs []float32, nq, dim int) ([]int8, []int32) {
	groups := (nq + tileQueries - 1) / tileQueries
	qg := make([]int8, groups*q.steps*32)
	corr := make([]int32, nq)
	for i := 0; i < nq; i++ {
		g, slot := i/tileQueries, i%tileQueries
		base := g*q.steps*32 + slot*4
		var sum int32
		quantize(qs[i*dim:(i+1)*dim], func(j int, c int8) {
			qg[base+(j/4)*32+j%4] = c
			sum += int32(c)
		})
		corr[i] = 128 * sum
	}
	return qg, corr
}

// scanInt8 returns, per query, the r rows of highest int8 score (scale × quantised inner product).
func (ix *Index) scanInt8(ctx context.Context, qs []float32, nq, r int) ([]*topK, error) {
	q := ix.q8
	n := ix.meta.Count
	qg, corr := q.queryGroups(qs, nq, ix.meta.Dim)
	blocks := (n + tileRows - 1) / tileRows
	groups := (nq + tileQueries - 1) / tileQueries
	parts := max(1, min(runtime.GOMAXPROCS(0), blocks/16))
	partial := make([][]*topK, parts)
	errs := make([]error, parts)
	blockBytes := q.steps * 128
	groupBytes := q.steps * 32
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := blocks*p/parts, blocks*(p+1)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			tops := make([]*topK, nq)
			for i := range tops {
				tops[i] = newTopK(r)
			}
			var (
				out    [tileQueries * tileRows]float32
				mask   [2 * tileQueries]uint16
				scales [tileRows]float32
				corrs  = make([][tileQueries]int32, groups)
				thresh = make([][tileQueries]float32, groups)
			)
			for g := range groups {
				for s := range tileQueries {
					thresh[g][s] = float32(math.Inf(1)) // padding queries never pass
					if qi := g*tileQueries + s; qi < nq {
						corrs[g][s] = corr[qi]
						thresh[g][s] = float32(math.Inf(-1))
					}
				}
			}
			for b := lo; b < hi; b++ {
				if b%256 == 0 && ctx.Err() != nil {
					errs[p] = ctx.Err()
					return
				}
				rows := q.codes[b*blockBytes : (b+1)*blockBytes]
				row0 := b * tileRows
				nr := min(tileRows, n-row0)
				copy(scales[:], q.scales[row0:row0+nr])
				for g := range groups {
					th := &thresh[g]
					i8dot.TileScored(rows, qg[g*groupBytes:(g+1)*groupBytes], q.steps, &scales, &corrs[g], th, &out, &mask)
					for s := range tileQueries {
						m := uint32(mask[2*s]) | uint32(mask[2*s+1])<<16
						if m == 0 {
							continue
						}
						t := tops[g*tileQueries+s]
						for ; m != 0; m &= m - 1 {
							i := bits.TrailingZeros32(m)
							if i >= nr {
								break
							}
							t.push(Result{Row: row0 + i, Score: out[s*tileRows+i]})
						}
						if len(t.h) == t.k {
							th[s] = t.h[0].Score
						}
					}
				}
			}
			partial[p] = tops
		}()
	}
	wg.Wait()
	return mergeTops(partial, errs)
}

// rescore replaces each query's int8 candidates by their exact float32 scores and keeps the top k.
func (ix *Index) rescore(qs []float32, cands []*topK, k int) []*topK {
	dim := ix.meta.Dim
	// Each candidate's row is read below by one search thread, one page fault at a time; asking for
	// every row first lets the kernel read the rows not in the page cache concurrently.
	if len(ix.vecs) > 0 {
		raw := unsafe.Slice((*byte)(unsafe.Pointer(&ix.vecs[0])), 4*len(ix.vecs))
		for _, c := range cands {
			for _, r := range c.h {
				mmap.WillNeed(raw, r.Row*dim*4, dim*4)
			}
		}
	}
	out := make([]*topK, len(cands))
	parts := max(1, min(runtime.GOMAXPROCS(0), len(cands)/4))
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := len(cands) * p / parts; i < len(cands)*(p+1)/parts; i++ {
				qv := qs[i*dim : (i+1)*dim]
				t := newTopK(k)
				for _, c := range cands[i].h {
					x := ix.vecs[c.Row*dim : (c.Row+1)*dim]
					x = x[:len(qv)]
					var s float32
					for j, a := range qv {
						s += a * x[j]
					}
					t.push(Result{Row: c.Row, Score: s})
				}
				out[i] = t
			}
		}()
	}
	wg.Wait()
	return out
}

func int8Kernel() string { return i8dot.Kernel() }

// Recall returns the mean fraction of each query's reference rows (exact search) that got also holds:
// recall@k when both hold k rows per query.
func Recall(ref, got [][]Result) float64 {
	var sum float64
	var n int
	for i := range ref {
		if len(ref[i]) == 0 {
			continue
		}
		in := map[int]bool{}
		for _, r := range got[i] {
			in[r.Row] = true
		}
		hit := 0
		for _, r := range ref[i] {
			if in[r.Row] {
				hit++
			}
		}
		sum += float64(hit) / float64(len(ref[i]))
		n++
	}
	if n == 0 {
		return 1
	}
	return sum / float64(n)
}
