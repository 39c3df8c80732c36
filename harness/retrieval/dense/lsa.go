package dense

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/text"
)

// LSAConfig configures FitLSA. Zero fields take the defaults.
type LSAConfig struct {
	// Dim is the number of latent dimensions (default 256). It is lowered to the rank the corpus allows.
	Dim int
	// MinDF drops terms found in fewer documents (default 2).
	MinDF int
	// MaxDFRatio drops terms found in more than this fraction of documents (default 0.5), a corpus-made
	// stopword list.
	MaxDFRatio float64
	// MaxVocab keeps at most this many terms, the most frequent by document frequency (default 100000).
	MaxVocab int
	// MaxFitDocs fits on a uniform sample of at most this many documents (default 100000), bounding
	// memory on large corpora; the vocabulary and idf still come from every document.
	MaxFitDocs int
	// Oversample is the randomized SVD's extra dimensions (default 10).
	Oversample int
	// PowerIters is the number of power iterations (default 2).
	PowerIters int
	// Seed makes the fit reproducible (default 1).
	Seed uint64
}

func (c *LSAConfig) defaults() {
	if c.Dim <= 0 {
		c.Dim = 256
	}
	if c.MinDF <= 0 {
		c.MinDF = 2
	}
	if c.MaxDFRatio <= 0 {
		c.MaxDFRatio = 0.5
	}
	if c.MaxVocab <= 0 {
		c.MaxVocab = 100000
	}
	if c.MaxFitDocs <= 0 {
		c.MaxFitDocs = 100000
	}
	if c.Oversample <= 0 {
		c.Oversample = 10
	}
	if c.PowerIters < 0 {
		c.PowerIters = 0
	} else if c.PowerIters == 0 {
		c.PowerIters = 2
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
}

// LSA is an offline embedder: a text's sublinear TF-IDF vector (1+ln tf)·idf, L2-normalised, projected on
// the top right singular vectors of the corpus TF-IDF matrix. Queries and passages embed the same way.
// Terms are the lowercased word tokens of harness/text (tokens with a letter or digit).
type LSA struct {
	Terms []string  // vocabulary, in term-id order
	IDF   []float32 // ln(N/df) per term
	Proj  []float32 // len(Terms) × K, row-major
	K     int
	Docs  int // documents the vocabulary was counted on
	Cfg   LSAConfig
	ids   map[string]int32
}

// lsaTerms calls fn for every lowercased word token of s; tokens that are pure punctuation are skipped.
func lsaTerms(s string, fn func(string)) {
	var buf []byte
	text.EachSpan(s, func(a, b int) {
		tok := s[a:b]
		r, _ := utf8.DecodeRuneInString(tok)
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return
		}
		lower := true
		for i := 0; i < len(tok); i++ {
			if c := tok[i]; c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
				lower = false
				break
			}
		}
		if lower {
			fn(tok)
			return
		}
		buf = append(buf[:0], strings.ToLower(tok)...)
		fn(string(buf))
	})
}

// FitLSA reads every document of docs and fits the LSA model. Progress goes to progress (nil for none).
func FitLSA(ctx context.Context, docs corpus.Reader, cfg LSAConfig, progress io.Writer) (*LSA, error) {
	cfg.defaults()
	if progress == nil {
		progress = io.Discard
	}
	start := time.Now()
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x15a))
	// Pass 1 (streaming): document frequencies, and a reservoir sample of documents to fit on.
	df := map[string]int{}
	var sample []string
	n := 0
	seen := map[string]bool{}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, err := docs.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("fit lsa: %w", err)
		}
		t := passageText(d)
		n++
		clear(seen)
		lsaTerms(t, func(w string) {
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
		})
		if len(sample) < cfg.MaxFitDocs {
			sample = append(sample, t)
		} else if j := rng.IntN(n); j < cfg.MaxFitDocs {
			sample[j] = t
		}
		if n%50000 == 0 {
			fmt.Fprintf(progress, "fit lsa: counted %d documents, %d distinct terms\n", n, len(df))
		}
	}
	if n == 0 {
		return nil, errors.New("fit lsa: the corpus is empty")
	}
	// Vocabulary: MinDF ≤ df ≤ MaxDFRatio·N, the MaxVocab most frequent, ties by term.
	type tdf struct {
		t  string
		df int
	}
	var keep []tdf
	maxDF := int(cfg.MaxDFRatio * float64(n))
	for t, c := range df {
		if c >= cfg.MinDF && c <= max(maxDF, 1) {
			keep = append(keep, tdf{t, c})
		}
	}
	df = nil
	sort.Slice(keep, func(i, j int) bool {
		if keep[i].df != keep[j].df {
			return keep[i].df > keep[j].df
		}
		return keep[i].t < keep[j].t
	})
	if len(keep) > cfg.MaxVocab {
		keep = keep[:cfg.MaxVocab]
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("fit lsa: no term occurs in at least %d of the %d documents", cfg.MinDF, n)
	}
	sort.Slice(keep, func(i, j int) bool { return keep[i].t < keep[j].t })
	l := &LSA{Docs: n, Cfg: cfg, ids: make(map[string]int32, len(keep))}
	for i, k := range keep {
		l.Terms = append(l.Terms, k.t)
		l.IDF = append(l.IDF, float32(math.Log(float64(n)/float64(k.df))))
		l.ids[k.t] = int32(i)
	}
	fmt.Fprintf(progress, "fit lsa: %d documents, vocabulary %d terms, fitting on %d documents\n", n, len(l.Terms), len(sample))

	// The sparse TF-IDF matrix of the sample, rows L2-normalised (CSR).
	X := csr{cols: len(l.Terms)}
	X.ptr = append(X.ptr, 0)
	for _, t := range sample {
		for _, e := range l.tfidf(t) {
			X.idx = append(X.idx, e.term)
			X.val = append(X.val, e.w)
		}
		X.ptr = append(X.ptr, len(X.idx))
	}
	sample = nil
	X.rows = len(X.ptr) - 1
	proj, k, err := randomizedSVD(ctx, &X, cfg, rng)
	if err != nil {
		return nil, fmt.Errorf("fit lsa: %w", err)
	}
	l.K = k
	l.Proj = proj
	fmt.Fprintf(progress, "fit lsa: dimension %d, %.1fs\n", k, time.Since(start).Seconds())
	return l, nil
}

type termWeight struct {
	term int32
	w    float64
}

// tfidf returns the L2-normalised sublinear TF-IDF entries of s over the vocabulary, by term id.
func (l *LSA) tfidf(s string) []termWeight {
	tf := map[int32]int{}
	lsaTerms(s, func(w string) {
		if id, ok := l.ids[w]; ok {
			tf[id]++
		}
	})
	out := make([]termWeight, 0, len(tf))
	for id, c := range tf {
		if w := (1 + math.Log(float64(c))) * float64(l.IDF[id]); w != 0 {
			out = append(out, termWeight{id, w})
		}
	}
	// The norm is summed in term order, not in the map's random order: floating-point addition is not
	// associative, and a last-bit difference here grows through the SVD into different vectors.
	sort.Slice(out, func(i, j int) bool { return out[i].term < out[j].term })
	var norm float64
	for _, e := range out {
		norm += e.w * e.w
	}
	if norm > 0 {
		inv := 1 / math.Sqrt(norm)
		for i := range out {
			out[i].w *= inv
		}
	}
	return out
}

// Dim returns the latent dimension.
func (l *LSA) Dim() int { return l.K }

// Embed projects each text's TF-IDF vector on the latent space. A text with no vocabulary term embeds
// to the zero vector. kind is ignored: LSA embeds queries and passages alike.
func (l *LSA) Embed(ctx context.Context, texts []string, kind Kind) ([][]float32, error) {
	out := make([][]float32, len(texts))
	acc := make([]float64, l.K)
	for i, t := range texts {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		clear(acc)
		for _, e := range l.tfidf(t) {
			row := l.Proj[int(e.term)*l.K : (int(e.term)+1)*l.K]
			for j, p := range row {
				acc[j] += e.w * float64(p)
			}
		}
		v := make([]float32, l.K)
		for j, a := range acc {
			v[j] = float32(a)
		}
		out[i] = v
	}
	return out, nil
}

// Describe identifies the model for meta.json.
func (l *LSA) Describe() map[string]string {
	return map[string]string{"kind": "lsa", "model": fmt.Sprintf("lsa-%d-v%d-n%d", l.K, len(l.Terms), l.Docs),
		"dim": strconv.Itoa(l.K)}
}

const lsaMagic = "ragbench-lsa/1\n"

func (l *LSA) save(path string) error { return l.Save(path) }

// Save writes the model to path.
func (l *LSA) Save(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("save lsa: %w", err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(lsaMagic)
	if err := gob.NewEncoder(w).Encode(l); err != nil {
		f.Close()
		return fmt.Errorf("save lsa %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("save lsa %s: %w", path, err)
	}
	return f.Close()
}

// LoadLSA reads a model written by Save, checking its shape.
func LoadLSA(path string) (*LSA, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load lsa: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	magic := make([]byte, len(lsaMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != lsaMagic {
		return nil, fmt.Errorf("load lsa %s: not an LSA model file", path)
	}
	l := &LSA{}
	if err := gob.NewDecoder(r).Decode(l); err != nil {
		return nil, fmt.Errorf("load lsa %s: %w", path, err)
	}
	if l.K <= 0 || len(l.IDF) != len(l.Terms) || len(l.Proj) != len(l.Terms)*l.K {
		return nil, fmt.Errorf("load lsa %s: inconsistent model (K %d, %d terms, %d idf, %d projection entries)", path, l.K, len(l.Terms), len(l.IDF), len(l.Proj))
	}
	l.ids = make(map[string]int32, len(l.Terms))
	for i, t := range l.Terms {
		l.ids[t] = int32(i)
	}
	return l, nil
}

// csr is a sparse row-major matrix.
type csr struct {
	rows, cols int
	ptr        []int
	idx        []int32
	val        []float64
}

// mulDense returns X·B for B of X.cols rows.
func (x *csr) mulDense(b *mat.Dense) *mat.Dense {
	_, c := b.Dims()
	out := mat.NewDense(x.rows, c, nil)
	braw, oraw := b.RawMatrix(), out.RawMatrix()
	for i := 0; i < x.rows; i++ {
		orow := oraw.Data[i*oraw.Stride : i*oraw.Stride+c]
		for p := x.ptr[i]; p < x.ptr[i+1]; p++ {
			j, v := int(x.idx[p]), x.val[p]
			brow := braw.Data[j*braw.Stride : j*braw.Stride+c]
			for t, bv := range brow {
				orow[t] += v * bv
			}
		}
	}
	return out
}

// tmulDense returns Xᵀ·B for B of X.rows rows.
func (x *csr) tmulDense(b *mat.Dense) *mat.Dense {
	_, c := b.Dims()
	out := mat.NewDense(x.cols, c, nil)
	braw, oraw := b.RawMatrix(), out.RawMatrix()
	for i := 0; i < x.rows; i++ {
		brow := braw.Data[i*braw.Stride : i*braw.Stride+c]
		for p := x.ptr[i]; p < x.ptr[i+1]; p++ {
			j, v := int(x.idx[p]), x.val[p]
			orow := oraw.Data[j*oraw.Stride : j*oraw.Stride+c]
			for t, bv := range brow {
				orow[t] += v * bv
			}
		}
	}
	return out
}

// orthonormalize returns an orthonormal basis of Y's columns by modified Gram–Schmidt with one round of
// re-orthogonalisation (a thin QR without forming the full Q). Columns that are numerically dependent
// on earlier ones become zero; the eigen step below drops the directions they would add.
func orthonormalize(y *mat.Dense) *mat.Dense {
	r, c := y.Dims()
	cols := make([][]float64, c)
	for j := range cols {
		cols[j] = mat.Col(nil, j, y)
	}
	for j, v := range cols {
		orig := math.Sqrt(floats.Dot(v, v))
		for pass := 0; pass < 2; pass++ {
			for i := 0; i < j; i++ {
				floats.AddScaled(v, -floats.Dot(cols[i], v), cols[i])
			}
		}
		n := math.Sqrt(floats.Dot(v, v))
		if n <= 1e-10*orig || n == 0 {
			clear(v)
			continue
		}
		floats.Scale(1/n, v)
	}
	q := mat.NewDense(r, c, nil)
	for j, v := range cols {
		q.SetCol(j, v)
	}
	return q
}

// randomizedSVD returns the top right singular vectors of X (X.cols × k, row-major float32) by the
// Halko–Martinsson–Tropp randomized range finder with power iterations; k is lowered to what the
// matrix shape allows.
func randomizedSVD(ctx context.Context, x *csr, cfg LSAConfig, rng *rand.Rand) ([]float32, int, error) {
	k := cfg.Dim
	l := k + cfg.Oversample
	if m := min(x.rows, x.cols); l > m {
		l = m
		if k > l {
			k = l
		}
	}
	if k <= 0 {
		return nil, 0, errors.New("empty matrix")
	}
	// Range of X (rows × l) from a Gaussian test matrix, refined by power iterations.
	omega := mat.NewDense(x.cols, l, nil)
	raw := omega.RawMatrix().Data
	for i := range raw {
		raw[i] = rng.NormFloat64()
	}
	q := orthonormalize(x.mulDense(omega))
	for it := 0; it < cfg.PowerIters; it++ {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		// Q ← orth(X Xᵀ Q). Re-orthonormalising after every product keeps the basis well conditioned;
		// the cols × l intermediate is skipped because Q is already orthonormal, which saves the larger
		// Gram–Schmidt on a wide vocabulary.
		q = orthonormalize(x.mulDense(x.tmulDense(q)))
	}
	// B = Qᵀ X (l × cols). Its right singular vectors are X's: with B Bᵀ = U Σ² Uᵀ, V = Bᵀ U Σ⁻¹.
	bt := x.tmulDense(q) // cols × l  (= Bᵀ)
	var bbt mat.SymDense
	bbt.SymOuterK(1, bt.T()) // Bᵀᵀ Bᵀ = B Bᵀ, l × l
	var eig mat.EigenSym
	if !eig.Factorize(&bbt, true) {
		return nil, 0, errors.New("eigendecomposition did not converge")
	}
	vals := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	// Keep the k largest with a positive eigenvalue.
	order := make([]int, 0, k)
	for i := len(vals) - 1; i >= 0 && len(order) < k; i-- {
		if vals[i] > 1e-12 {
			order = append(order, i)
		}
	}
	if len(order) == 0 {
		return nil, 0, errors.New("the TF-IDF matrix is zero")
	}
	k = len(order)
	us := mat.NewDense(l, k, nil)
	for c, i := range order {
		s := math.Sqrt(vals[i])
		for r := 0; r < l; r++ {
			us.Set(r, c, vecs.At(r, i)/s)
		}
	}
	var v mat.Dense
	v.Mul(bt, us) // cols × k
	out := make([]float32, x.cols*k)
	for r := 0; r < x.cols; r++ {
		for c := 0; c < k; c++ {
			out[r*k+c] = float32(v.At(r, c))
		}
	}
	return out, k, nil
}
