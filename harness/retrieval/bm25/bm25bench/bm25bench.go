// Package bm25bench measures the BM25 engine (harness/retrieval/bm25): build throughput, peak memory and
// index size, and single-thread query speed with latency percentiles, with the exhaustive scorer
// (BruteForce) as the peer in the same run. It generates synthetic 100-word passages or indexes a real
// corpus. It is a measuring tool, not a test suite; `ragbench index bench` runs it.
package bm25bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval/bm25"
	"github.com/ragbench/ragbench/internal/rusage"
)

// Config configures Run. Start from DefaultConfig.
type Config struct {
	// Corpus is the corpus file to index (any format corpus.Open reads); empty generates N synthetic
	// 100-word passages (bm25.Synth, seed 1) into Dir.
	Corpus string
	// N is the number of synthetic passages (ignored with Corpus).
	N int
	// Dir is the work directory (the corpus and the index); empty uses a temporary one, removed
	// afterwards.
	Dir string
	// Queries is the number of queries timed; 0 skips the query part.
	Queries int
	// QueryFile holds the queries to time, one per line (the first Queries of them); empty generates
	// synthetic ones (bm25.Synth, seed 2).
	QueryFile string
	// K is the number of hits per query.
	K int
	// MemoryMB is the build's postings buffer before it spills a run (bm25.Options.MemoryBudget).
	MemoryMB int64
	// Workers is the build's analysis workers (0: GOMAXPROCS).
	Workers int
	// PeerQueries is how many of the queries also run through the exhaustive scorer, for comparison.
	PeerQueries int
	// SkipChecksums and HugePostings are the bm25.OpenOptions the index is opened with.
	SkipChecksums, HugePostings bool
	// CPUProfile, when set, is the file a CPU profile of the build is written to.
	CPUProfile string
	// Log receives progress (nil: none).
	Log io.Writer
}

// DefaultConfig returns the defaults: 1,000,000 synthetic passages, 2,000 queries, top 10, a 1 GiB
// postings buffer, 200 peer queries.
func DefaultConfig() Config {
	return Config{N: 1000000, Queries: 2000, K: 10, MemoryMB: 1024, PeerQueries: 200}
}

// Validate reports a configuration Run cannot measure.
func (c *Config) Validate() error {
	switch {
	case c.Corpus == "" && c.N <= 0:
		return errors.New("the number of synthetic passages (n) must be positive")
	case c.Queries < 0 || c.PeerQueries < 0:
		return errors.New("the numbers of queries and peer queries must not be negative")
	case c.K <= 0:
		return errors.New("k must be positive")
	case c.MemoryMB <= 0:
		return errors.New("the postings buffer (memory-mb) must be positive")
	case c.Workers < 0:
		return errors.New("workers must not be negative")
	}
	return nil
}

// Report is what Run measured. Times are in seconds, sizes in bytes.
type Report struct {
	CorpusPath  string  `json:"corpus"`
	CorpusBytes int64   `json:"corpus_bytes"`
	Docs        int64   `json:"docs"`
	BuildWall   float64 `json:"build_wall_s"`
	BuildCPU    float64 `json:"build_cpu_s"`
	// PeakRSS is the whole process's peak resident set size, corpus generation included.
	PeakRSS        int64   `json:"peak_rss_bytes"`
	IndexBytes     int64   `json:"index_bytes"`
	InvertedBytes  int64   `json:"inverted_bytes"`    // the index without the stored text (docs.bin)
	StoredText     int64   `json:"stored_text_bytes"` // docs.bin
	Terms          int64   `json:"terms"`
	Postings       int64   `json:"postings"`
	AvgDL          float64 `json:"avgdl"`
	HugeAsked      bool    `json:"huge_postings_asked"`
	HugePostings   bool    `json:"huge_postings"` // postings.bin was read into huge pages rather than mapped
	Queries        int     `json:"queries"`       // 0: the query part was skipped
	K              int     `json:"k"`
	QueryWall      float64 `json:"query_wall_s"`
	QueryCPU       float64 `json:"query_cpu_s"`
	P50            float64 `json:"p50_s"`
	P99            float64 `json:"p99_s"`
	TermsPerQuery  float64 `json:"terms_per_query"`    // distinct indexed terms
	PostingsPerQ   float64 `json:"postings_per_query"` // what an exhaustive scorer reads
	PeerQueries    int     `json:"peer_queries"`
	PeerWall       float64 `json:"peer_wall_s"`        // the exhaustive scorer over the first PeerQueries
	PeerSearchWall float64 `json:"peer_search_wall_s"` // Search over the same queries
}

// Print writes the report as a table, one line per measurement.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "corpus      %s: %d documents, %.1f MB\n", r.CorpusPath, r.Docs, float64(r.CorpusBytes)/1e6)
	fmt.Fprintf(w, "build       %.1fs wall, %.1fs CPU: %.0f passages/s wall, %.0f passages per CPU-second\n",
		r.BuildWall, r.BuildCPU, float64(r.Docs)/r.BuildWall, float64(r.Docs)/r.BuildCPU)
	fmt.Fprintf(w, "peak RSS    %.2f GB (whole process, including corpus generation)\n", float64(r.PeakRSS)/1e9)
	cb := float64(r.CorpusBytes)
	fmt.Fprintf(w, "index size  %.1f MB = %.2f x the corpus file (inverted index alone %.1f MB = %.2f x; stored text %.1f MB)\n",
		float64(r.IndexBytes)/1e6, float64(r.IndexBytes)/cb, float64(r.InvertedBytes)/1e6, float64(r.InvertedBytes)/cb, float64(r.StoredText)/1e6)
	fmt.Fprintf(w, "terms       %d, postings %d, avgdl %.1f\n", r.Terms, r.Postings, r.AvgDL)
	if r.HugeAsked {
		how := "mapped (not 4 MiB to 2 GiB, or not Linux)"
		if r.HugePostings {
			how = "read into transparent huge pages"
		}
		fmt.Fprintf(w, "postings    --huge-postings: postings.bin %s\n", how)
	}
	if r.Queries == 0 {
		fmt.Fprintln(w, "query       skipped (--queries 0)")
		return
	}
	nq := float64(r.Queries)
	round := func(s float64) time.Duration { return time.Duration(s * 1e9).Round(time.Microsecond) }
	fmt.Fprintf(w, "query       %d queries, top %d, one thread: %.0f q/s wall, %.0f q per CPU-second, p50 %s, p99 %s\n",
		r.Queries, r.K, nq/r.QueryWall, nq/r.QueryCPU, round(r.P50), round(r.P99))
	fmt.Fprintf(w, "query set   %.2f indexed terms and %.0f postings per query on average\n", r.TermsPerQuery, r.PostingsPerQ)
	if r.PeerQueries > 0 {
		np := float64(r.PeerQueries)
		fmt.Fprintf(w, "peer        exhaustive scoring of the same %d queries: %.0f q/s vs MaxScore %.0f q/s (%.1fx)\n",
			r.PeerQueries, np/r.PeerWall, np/r.PeerSearchWall, r.PeerWall/r.PeerSearchWall)
	}
}

// logf writes progress to c.Log.
func (c *Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format, args...)
	}
}

// Run builds an index of the configured corpus in the work directory and measures it.
func Run(ctx context.Context, c Config) (*Report, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	dir := c.Dir
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	} else {
		d, err := os.MkdirTemp("", "ragbench-bm25-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	path := c.Corpus
	if path == "" {
		path = filepath.Join(dir, "synthetic.tsv")
		c.logf("bench: writing %d synthetic passages to %s\n", c.N, path)
		if err := writeSynth(ctx, path, c.N); err != nil {
			return nil, err
		}
	}
	ixDir := filepath.Join(dir, "index")
	rep, err := c.build(ctx, path, ixDir)
	if err != nil {
		return nil, err
	}
	ix, err := bm25.OpenWith(ixDir, bm25.OpenOptions{SkipChecksums: c.SkipChecksums, HugePostings: c.HugePostings})
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	rep.HugeAsked, rep.HugePostings = c.HugePostings, ix.HugePostings()
	if c.Queries == 0 {
		return rep, nil
	}
	qs, err := c.queries()
	if err != nil {
		return nil, err
	}
	if err := c.search(ctx, ix, qs, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// writeSynth writes n synthetic passages as a DPR TSV file at path.
func writeSynth(ctx context.Context, path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := bm25.NewSynth(1).WriteTSV(ctx, f, n); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// build indexes the corpus at path into ixDir and reports the build's time, memory and sizes.
func (c *Config) build(ctx context.Context, path, ixDir string) (*Report, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	r, err := corpus.Open(path, "")
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if c.CPUProfile != "" {
		pf, err := os.Create(c.CPUProfile)
		if err != nil {
			return nil, err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	start, cpu0 := time.Now(), rusage.CPUTime()
	m, err := bm25.Build(ctx, r, ixDir, bm25.Options{MemoryBudget: c.MemoryMB << 20, Workers: c.Workers, Progress: c.Log})
	if err != nil {
		return nil, err
	}
	wall, cpu := time.Since(start), rusage.CPUTime()-cpu0
	pprof.StopCPUProfile()
	rep := &Report{CorpusPath: path, CorpusBytes: st.Size(), Docs: m.Docs, BuildWall: wall.Seconds(), BuildCPU: cpu.Seconds(),
		PeakRSS: rusage.PeakRSS(), Terms: m.Terms, Postings: m.Postings, AvgDL: m.AvgDL(), StoredText: m.Files["docs.bin"].Size}
	for _, fs := range m.Files {
		rep.IndexBytes += fs.Size
	}
	for _, name := range []string{"postings.bin", "terms.bin", "termoff.bin", "terminfo.bin", "norms.bin", "lens.bin", "docoff.bin"} {
		rep.InvertedBytes += m.Files[name].Size
	}
	return rep, nil
}

// queries returns the queries to time: the first c.Queries lines of the query file, or synthetic ones.
func (c *Config) queries() ([]string, error) {
	if c.QueryFile == "" {
		synth := bm25.NewSynth(2)
		qs := make([]string, c.Queries)
		for i := range qs {
			qs[i] = synth.Query()
		}
		return qs, nil
	}
	data, err := os.ReadFile(c.QueryFile)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	var qs []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && len(qs) < c.Queries {
			qs = append(qs, l)
		}
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("bench: %s has no queries", c.QueryFile)
	}
	return qs, nil
}

// search times the queries qs, one thread, after a warm-up pass over the first 50, and then the first
// c.PeerQueries of them with the exhaustive scorer and again with Search.
func (c *Config) search(ctx context.Context, ix *bm25.Index, qs []string, rep *Report) error {
	k := c.K
	// Warm the page cache and the dictionary with a first pass over a few queries.
	for _, q := range qs[:min(50, len(qs))] {
		ix.Search(ctx, q, k)
	}
	lat := make([]time.Duration, len(qs))
	start, cpu0 := time.Now(), rusage.CPUTime()
	for i, q := range qs {
		t := time.Now()
		if _, err := ix.Search(ctx, q, k); err != nil {
			return err
		}
		lat[i] = time.Since(t)
	}
	wall, cpu := time.Since(start), rusage.CPUTime()-cpu0
	rep.Queries, rep.K, rep.QueryWall, rep.QueryCPU = len(qs), k, wall.Seconds(), cpu.Seconds()
	rep.P50, rep.P99 = percentile(lat, 0.5).Seconds(), percentile(lat, 0.99).Seconds()
	var qterms, qpost int64
	for _, q := range qs {
		t, p, err := ix.QueryCost(q)
		if err != nil {
			return err
		}
		qterms, qpost = qterms+int64(t), qpost+p
	}
	rep.TermsPerQuery, rep.PostingsPerQ = float64(qterms)/float64(len(qs)), float64(qpost)/float64(len(qs))
	np := min(c.PeerQueries, len(qs))
	if np == 0 {
		return nil
	}
	start = time.Now()
	for _, q := range qs[:np] {
		if _, err := ix.BruteForce(q, k); err != nil {
			return err
		}
	}
	rep.PeerWall = time.Since(start).Seconds()
	start = time.Now()
	for _, q := range qs[:np] {
		ix.Search(ctx, q, k)
	}
	rep.PeerSearchWall = time.Since(start).Seconds()
	rep.PeerQueries = np
	return nil
}

// percentile returns the p-quantile (0 to 1) of d, 0 for none.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}
