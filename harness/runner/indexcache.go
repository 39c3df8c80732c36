package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ragbench/ragbench/internal/atomicdir"
	"github.com/ragbench/ragbench/internal/lockfile"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/ngram"
	"github.com/ragbench/ragbench/harness/retrieval/bm25"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/harness/retrieval/sparse"
	"github.com/ragbench/ragbench/harness/retrieval/unitindex"
)

// indexFormat versions the layout of the on-demand index cache; it is part of every index key.
const indexFormat = "ragbench-runner-index/1"

// IndexKind is the kind of an index in the cache: its name is part of the cache key, the directory
// name and the provenance (index/KIND/CORPUS), so the names never change.
type IndexKind string

// The index kinds: BM25 over a corpus, an n-gram index for corpus statistics, a prebuilt index a
// config names (retrieval.dir), and the unit index of a UMG expert (UnitsIndex).
const (
	IndexBM25     IndexKind = "bm25"
	IndexNgram    IndexKind = "ngram"
	IndexPrebuilt IndexKind = "prebuilt"
	unitsPrefix             = "units-"
)

// UnitsIndex is the kind of the unit index of expert e (bm25, dense, splade).
func UnitsIndex(e string) IndexKind { return IndexKind(unitsPrefix + e) }

// Expert is the expert of a unit index kind, and whether k is one.
func (k IndexKind) Expert() (string, bool) { return strings.CutPrefix(string(k), unitsPrefix) }

// indexKey names an index of a plan: its kind and the corpus it is built over.
type indexKey struct {
	kind   IndexKind
	corpus string
}

// IndexNeed is an index a plan needs: what it is built from, its cache key and directory.
type IndexNeed struct {
	// Kind is bm25, ngram, units-EXPERT, or prebuilt.
	Kind IndexKind `json:"kind" yaml:"kind"`
	// Corpus is the corpus name in the config.
	Corpus string `json:"corpus" yaml:"corpus"`
	// Key is the SHA-256 of the inputs' contents and the build options.
	Key string `json:"key" yaml:"key"`
	// Dir is the cache directory of the built index.
	Dir string `json:"dir" yaml:"dir"`
	// Built is true when Dir already holds the index.
	Built bool `json:"-" yaml:"-"`

	src  corpusSource
	opts map[string]any
	// bm25 and ngram are the build options of a bm25 or an n-gram index (what opts keys).
	bm25  bm25.Options
	ngram ngram.BuildOptions
}

// corpusSource is a resolved corpus: files whose contents identify it, and how to read it.
type corpusSource struct {
	name   string
	files  []string
	format corpus.Format
	pool   string // dataset name whose context pool is the corpus
	also   []string
}

// Resources is a config's index cache: it resolves the corpora, keys and builds the indexes a plan
// needs, and hashes the files that identify a run; Open (components.go) opens the plan's components.
type Resources struct {
	cfg      Config
	cacheDir string
	// Progress receives "building ... took ..." lines.
	Progress io.Writer

	hashes map[string]string // file → sha256
}

// NewResources resolves the index cache directory of c.
func NewResources(c Config, progress io.Writer) (*Resources, error) {
	dir := c.IndexCache
	if dir == "" {
		base, err := datasets.CacheDir()
		if err != nil {
			return nil, fmt.Errorf("index cache: %w (set index_cache in the config)", err)
		}
		dir = filepath.Join(base, "indexes")
	}
	if progress == nil {
		progress = io.Discard
	}
	return &Resources{cfg: c, cacheDir: dir, Progress: progress, hashes: map[string]string{}}, nil
}

// FileHash returns the hex SHA-256 of a file's contents. Hashes of files of 64 MiB and more are
// remembered in the index cache (hashes/) against the file's path, size and modification time, so a
// large corpus is read once, not at every run.
func (r *Resources) FileHash(path string) (string, error) {
	if h, ok := r.hashes[path]; ok {
		return h, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	var memo string
	if st.Size() >= 64<<20 {
		abs, _ := filepath.Abs(path)
		k := sha256.Sum256([]byte(abs))
		memo = filepath.Join(r.cacheDir, "hashes", hex.EncodeToString(k[:16])+".json")
		var m fileHashMemo
		if b, err := os.ReadFile(memo); err == nil && json.Unmarshal(b, &m) == nil &&
			m.Path == abs && m.Size == st.Size() && m.ModTime == st.ModTime().UnixNano() && len(m.SHA256) == 64 {
			r.hashes[path] = m.SHA256
			return m.SHA256, nil
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	s := hex.EncodeToString(h.Sum(nil))
	r.hashes[path] = s
	if memo != "" {
		abs, _ := filepath.Abs(path)
		b, _ := json.Marshal(fileHashMemo{Path: abs, Size: st.Size(), ModTime: st.ModTime().UnixNano(), SHA256: s})
		if os.MkdirAll(filepath.Dir(memo), 0o755) == nil {
			writeFileAtomic(memo, b) // best effort: without it the file is hashed again next time
		}
	}
	return s, nil
}

// fileHashMemo is a remembered file hash.
type fileHashMemo struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
	SHA256  string `json:"sha256"`
}

// resolveCorpus finds a corpus's files.
func (r *Resources) resolveCorpus(name string) (corpusSource, error) {
	cc, ok := r.cfg.Corpora[name]
	if !ok {
		return corpusSource{}, fmt.Errorf("corpus %q is not in corpora", name)
	}
	if cc.Pool != "" {
		ds, err := datasets.Load(context.Background(), cc.Pool, datasets.LoadOptions{Limit: 1})
		if err != nil {
			return corpusSource{}, fmt.Errorf("corpora.%s.pool: %w", name, err)
		}
		also, err := findAll(name, cc.Also)
		if err != nil {
			return corpusSource{}, err
		}
		return corpusSource{name: name, files: append(append([]string(nil), ds.Files...), also...), pool: cc.Pool, also: also}, nil
	}
	p, err := findData(cc.Path)
	if err != nil {
		return corpusSource{}, fmt.Errorf("corpora.%s.path: %w", name, err)
	}
	also, err := findAll(name, cc.Also)
	if err != nil {
		return corpusSource{}, err
	}
	return corpusSource{name: name, files: append([]string{p}, also...), format: corpus.Format(cc.Format), also: also}, nil
}

func findAll(name string, paths []string) ([]string, error) {
	var out []string
	for i, a := range paths {
		p, err := findData(a)
		if err != nil {
			return nil, fmt.Errorf("corpora.%s.also[%d]: %w", name, i, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// findData resolves a relative path against the working directory, then the data directories.
func findData(p string) (string, error) {
	if _, err := os.Stat(p); err == nil || filepath.IsAbs(p) {
		return p, err
	}
	for _, d := range datasets.DataDirs() {
		q := filepath.Join(d, p)
		if _, err := os.Stat(q); err == nil {
			return q, nil
		}
	}
	return "", fmt.Errorf("%s: not found here or in the data directories (%v)", p, datasets.DataDirs())
}

// Needs lists the indexes the plan's datasets need, with their cache keys, in dataset order (each
// once).
func (r *Resources) Needs(p *Plan) ([]*IndexNeed, error) {
	var out []*IndexNeed
	seen := map[string]bool{}
	add := func(kind IndexKind, src corpusSource, opts map[string]any, build IndexNeed) error {
		h := sha256.New()
		fmt.Fprintf(h, "%s\n%s\n", indexFormat, kind)
		for _, f := range src.files {
			fh, err := r.FileHash(f)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "file %s\n", fh)
		}
		fmt.Fprintf(h, "pool %v format %s\n", src.pool != "", src.format)
		ob, _ := json.Marshal(opts)
		h.Write(ob)
		key := hex.EncodeToString(h.Sum(nil))
		if seen[key] {
			return nil
		}
		seen[key] = true
		dir := filepath.Join(r.cacheDir, string(kind)+"-"+key[:20])
		_, err := os.Stat(dir)
		out = append(out, &IndexNeed{Kind: kind, Corpus: src.name, Key: key, Dir: dir, Built: err == nil, src: src, opts: opts,
			bm25: build.bm25, ngram: build.ngram})
		return nil
	}
	for _, d := range p.Datasets {
		if d.Config.Corpus == "" {
			continue
		}
		src, err := r.resolveCorpus(d.Config.Corpus)
		if err != nil {
			return nil, err
		}
		if r.cfg.Retrieval.Backend == "bm25" {
			bo := bm25.Options{K1: r.cfg.Retrieval.K1, B: r.cfg.Retrieval.B}
			if err := add(IndexBM25, src, map[string]any{"k1": bo.K1, "b": bo.B}, IndexNeed{bm25: bo}); err != nil {
				return nil, err
			}
		}
		if u := r.cfg.Retrieval.Units; len(u.Experts) > 0 && d.In(u.Datasets) {
			for _, e := range u.Experts {
				if err := add(UnitsIndex(e), src, unitOpts(u, e, r.cfg.Retrieval), IndexNeed{}); err != nil {
					return nil, err
				}
			}
		}
		if ng := r.cfg.Ngram; ng.Build && d.In(ng.Datasets) {
			no := ngram.BuildOptions{Lowercase: r.cfg.Ngram.Lowercase, Title: true}
			if err := add(IndexNgram, src, map[string]any{"lowercase": no.Lowercase}, IndexNeed{ngram: no}); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// Ensure builds the index of n unless its cache directory holds it. A build goes to a temporary
// directory renamed into place when complete, under a lock that makes concurrent runs (shards on one
// machine) build it once.
func (r *Resources) Ensure(ctx context.Context, n *IndexNeed) error {
	if err := os.MkdirAll(r.cacheDir, 0o755); err != nil {
		return err
	}
	lf, err := os.OpenFile(n.Dir+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := lockfile.WaitLock(lf); err != nil {
		return err
	}
	// Under the lock no other build of n.Dir runs, so any N.tmp-* beside it was left by a killed one.
	atomicdir.CleanStale(n.Dir)
	if _, err := os.Stat(n.Dir); err == nil {
		n.Built = true
		return nil
	}
	tmp := fmt.Sprintf("%s.tmp-%d", n.Dir, os.Getpid())
	os.RemoveAll(tmp)
	fmt.Fprintf(r.Progress, "building %s index over corpus %s into %s\n", n.Kind, n.Corpus, n.Dir)
	start := time.Now()
	if err := r.build(ctx, n, tmp); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("build %s index over %s: %w", n.Kind, n.Corpus, err)
	}
	if err := os.Rename(tmp, n.Dir); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	n.Built = true
	fmt.Fprintf(r.Progress, "built %s index over corpus %s in %s\n", n.Kind, n.Corpus, time.Since(start).Round(time.Millisecond))
	return nil
}

// unitOpts are what a unit index of expert e depends on besides its corpus (its cache key).
func unitOpts(u UnitsConfig, e string, rc RetrievalConfig) map[string]any {
	o := map[string]any{"sizes": u.OpenSizes(), "long_tokens": u.LongTokens, "k1": rc.K1, "b": rc.B}
	if e == "dense" && u.Dense.Model != "" {
		d := u.Dense
		o["dense"] = map[string]any{"model": d.Model, "dimensions": d.Dimensions, "preset": d.Preset, "task": d.Task,
			"query_prefix": d.QueryPrefix, "passage_prefix": d.PassagePrefix}
	}
	if e == "splade" {
		s := u.Sparse.Defaults()
		o["sparse"] = map[string]any{"model": s.Model, "vocab": s.Vocab, "no_truncate": s.NoTruncate}
	}
	return o
}

func (r *Resources) openCorpus(ctx context.Context, src corpusSource) (corpus.Reader, error) {
	if src.pool == "" && len(src.also) == 0 {
		return corpus.Open(src.files[0], src.format)
	}
	pool, err := r.poolDocs(ctx, src, nil)
	if err != nil {
		return nil, err
	}
	docs := make([]corpus.Document, len(pool))
	for i, d := range pool {
		docs[i] = d.Document
	}
	return corpus.NewSliceReader(docs), nil
}

func (r *Resources) build(ctx context.Context, n *IndexNeed, out string) error {
	rd, err := r.openCorpus(ctx, n.src)
	if err != nil {
		return err
	}
	defer rd.Close()
	expert, units := n.Kind.Expert()
	switch {
	case n.Kind == IndexBM25:
		_, err = bm25.Build(ctx, rd, out, n.bm25)
	case n.Kind == IndexNgram:
		_, err = ngram.BuildFrom(ctx, rd, out, n.ngram)
	case units && (expert == "bm25" || expert == "dense" || expert == "splade"):
		docs, derr := r.poolDocs(ctx, n.src, rd)
		if derr != nil {
			return derr
		}
		u := r.cfg.Retrieval.Units
		bo := unitindex.BuildOptions{
			Kind:  expert,
			Units: corpus.UnitOptions{Sizes: u.OpenSizes(), LongTokens: u.LongTokens},
			BM25:  bm25.Options{K1: r.cfg.Retrieval.K1, B: r.cfg.Retrieval.B},
		}
		emb, sp, cerr := r.unitEncoders(ctx, expert)
		if cerr != nil {
			return cerr
		}
		defer closeAll(emb, sp)
		bo.Embedder, bo.Sparse = emb, sp
		if bo.Kind == "splade" {
			bo.Kind = "sparse"
		}
		err = unitindex.Build(ctx, docs, out, bo)
	default:
		err = fmt.Errorf("unknown index kind %s", n.Kind)
	}
	return err
}

// unitEncoders opens the servers of a unit expert: the dense expert's embedder when Dense names a
// model (nil: LSA), the splade expert's TEI client. The caller closes them.
func (r *Resources) unitEncoders(ctx context.Context, expert string) (dense.Embedder, sparse.Encoder, error) {
	u := r.cfg.Retrieval.Units
	switch {
	case expert == "dense" && u.Dense.Model != "":
		e, err := dense.NewOpenAI(ctx, u.Dense)
		if err != nil {
			return nil, nil, fmt.Errorf("retrieval.units.dense: %w", err)
		}
		return e, nil, nil
	case expert == "splade":
		s, err := sparse.NewTEI(u.Sparse)
		if err != nil {
			return nil, nil, fmt.Errorf("retrieval.units.sparse: %w", err)
		}
		return nil, s, nil
	}
	return nil, nil, nil
}

func closeAll(xs ...any) {
	for _, x := range xs {
		if c, ok := x.(io.Closer); ok && c != nil {
			c.Close()
		}
	}
}

// poolDocs reads a corpus into memory as pool documents (with the dataset's sentences for a pool),
// followed by the documents of its also files.
func (r *Resources) poolDocs(ctx context.Context, src corpusSource, rd corpus.Reader) ([]corpus.PoolDoc, error) {
	var docs []corpus.PoolDoc
	read := func(rd corpus.Reader) error {
		for {
			d, err := rd.Next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			docs = append(docs, corpus.PoolDoc{Document: d})
		}
	}
	if src.pool != "" {
		ds, err := datasets.Load(ctx, src.pool, datasets.LoadOptions{})
		if err != nil {
			return nil, err
		}
		docs, _ = corpus.Pool(ds.Examples)
	} else if rd != nil && len(src.also) == 0 {
		if err := read(rd); err != nil {
			return nil, err
		}
	} else {
		f, err := corpus.Open(src.files[0], src.format)
		if err != nil {
			return nil, err
		}
		err = read(f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	ids := map[string]bool{}
	for _, d := range docs {
		ids[d.ID] = true
	}
	for _, a := range src.also {
		f, err := corpus.Open(a, corpus.FormatAuto)
		if err != nil {
			return nil, err
		}
		n := len(docs)
		err = read(f)
		f.Close()
		if err != nil {
			return nil, err
		}
		for _, d := range docs[n:] {
			if ids[d.ID] {
				return nil, fmt.Errorf("corpus %s: document id %q of %s is already in the corpus", src.name, d.ID, a)
			}
			ids[d.ID] = true
		}
	}
	return docs, nil
}

// Provenance is what the resolved config records besides the config: tool version, git commit, config
// hash and the checksums of the datasets and indexes used.
type Provenance struct {
	Version    string `yaml:"version" json:"version"`
	GitCommit  string `yaml:"git_commit" json:"git_commit"`
	ConfigHash string `yaml:"config_hash" json:"config_hash"`
	// Shard is "K/N" for a shard's run directory.
	Shard    string            `yaml:"shard,omitempty" json:"shard,omitempty"`
	Datasets map[string]string `yaml:"datasets" json:"datasets"`
	Indexes  []IndexNeed       `yaml:"indexes,omitempty" json:"indexes,omitempty"`
	// Questions are the planned questions of each dataset (after limit and shard): a cell with
	// fewer records did not finish (reports flag it as n of planned).
	Questions map[string]int `yaml:"questions,omitempty" json:"questions,omitempty"`
	// Identity is what besides the config determines the records, and is part of the config hash:
	// "templates/FILE" → sha256 of the prompt templates and exemplars read, "index/KIND/CORPUS" → the
	// key of each index used.
	Identity map[string]string `yaml:"identity,omitempty" json:"identity,omitempty"`
}

// prebuilt identifies the prebuilt indexes a config names (retrieval.dir, ngram.index) by the SHA-256
// of their metadata file, which holds the size and checksum of every index file.
func (r *Resources) prebuilt() ([]IndexNeed, error) {
	var out []IndexNeed
	add := func(kind IndexKind, dir, meta string) error {
		h, err := r.FileHash(filepath.Join(dir, meta))
		if err != nil {
			return fmt.Errorf("%s index %s: %w", kind, dir, err)
		}
		out = append(out, IndexNeed{Kind: kind, Corpus: "(prebuilt)", Key: h, Dir: dir})
		return nil
	}
	if r.cfg.Retrieval.Backend == "index" && r.cfg.Retrieval.Index.Dir != "" {
		if err := add(IndexPrebuilt, r.cfg.Retrieval.Index.Dir, "meta.json"); err != nil {
			return nil, err
		}
	}
	if !r.cfg.Ngram.Build && r.cfg.Ngram.Index != "" {
		meta := "manifest.json"
		if _, err := os.Stat(filepath.Join(r.cfg.Ngram.Index, meta)); err != nil {
			return out, nil // an Infini-gram index without a manifest: named by its path only
		}
		if err := add(IndexNgram, r.cfg.Ngram.Index, meta); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// datasetChecksums returns "dataset/file" → sha256 for the plan's dataset files.
func (r *Resources) datasetChecksums(p *Plan) (map[string]string, error) {
	out := map[string]string{}
	for _, d := range p.Datasets {
		files := append([]string(nil), d.Files...)
		sort.Strings(files)
		for _, f := range files {
			h, err := r.FileHash(f)
			if err != nil {
				return nil, err
			}
			out[d.Name+"/"+filepath.Base(f)] = h
		}
	}
	return out, nil
}
