// Package ngrambench measures the ngram engine: build throughput, bytes per token on disk, peak build
// memory, and Count/CoOccur latency percentiles, with Go's index/suffixarray as the peer in the same
// run. It generates a Zipfian corpus or repeats a real one. It is a measuring tool, not a test suite.
package ngrambench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"index/suffixarray"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/ngram"
	"github.com/ragbench/ragbench/harness/text"

	"github.com/ragbench/ragbench/internal/rusage"
)

// Config configures Run.
type Config struct {
	Tokens      int64         // corpus size in tokens (separators included)
	Corpus      string        // repeat this corpus; empty: generate a Zipfian one
	Format      corpus.Format // format of Corpus
	Vocab       int           // Zipfian vocabulary size
	ZipfS       float64       // Zipf exponent (> 1)
	Seed        int64
	Queries     int    // queries of each kind
	QueryFile   string // lines "count\tq" or "cooc\ta\tb"
	Window      int    // CoOccur window
	MaxFreq     uint64 // CoOccur clauses are chosen with counts in [MinFreq, MaxFreq] (default 1e5)
	MinFreq     uint64 // default 10
	ShardTokens int
	Peer        bool      // also measure index/suffixarray on the same text
	Dir         string    // where to build; empty: a temporary directory, removed after
	Progress    io.Writer // the build's own progress (spill and merge lines)
	// Log receives the bench's phase lines (writing the corpus, building, querying); nil: Progress.
	Log        io.Writer
	CPUProfile string // write a CPU profile of the build here
	// Stream feeds the build from the generator (or the in-memory repeat) directly, so that producing
	// the text runs during the build, as before the corpus file existed. By default the corpus is
	// first written to Dir/corpus.tsv (DPR TSV, untimed) and the build reads that file, as it reads a
	// user's corpus.
	Stream bool
	// OnMeasured, when set, receives the report before the peer runs (the peer is the heaviest part).
	OnMeasured func(*Report)
}

// Report is what Run measured.
type Report struct {
	Corpus           string  `json:"corpus"`
	Tokens           int64   `json:"tokens"`
	Docs             int64   `json:"docs"`
	Shards           int     `json:"shards"`
	BuildSeconds     float64 `json:"build_seconds"`
	BuildTokensPerS  float64 `json:"build_tokens_per_s"`
	BuildCPUSeconds  float64 `json:"build_cpu_seconds"`
	SourceCPUSeconds float64 `json:"source_cpu_seconds"`
	CorpusFile       string  `json:"corpus_file,omitempty"`
	CorpusFileBytes  int64   `json:"corpus_file_bytes,omitempty"`
	WriteSeconds     float64 `json:"corpus_write_seconds,omitempty"`
	LoadAverage      string  `json:"load_average"`
	DiskBytes        int64   `json:"disk_bytes"`
	BytesPerToken    float64 `json:"bytes_per_token"`
	PeakRSSBytes     int64   `json:"peak_rss_bytes"`
	LargestShard     int64   `json:"largest_shard_tokens"`
	PeakBytesPerTok  float64 `json:"peak_rss_bytes_per_token_of_largest_shard"`
	OpenSeconds      float64 `json:"open_verify_seconds"`
	ResidentBefore   float64 `json:"resident_fraction_before_queries"`
	ResidentAfter    float64 `json:"resident_fraction_after_queries"`
	CountQueries     int     `json:"count_queries"`
	CountP50us       float64 `json:"count_p50_us"`
	CountP99us       float64 `json:"count_p99_us"`
	CoocQueries      int     `json:"cooc_queries"`
	CoocWindow       int     `json:"cooc_window"`
	CoocMaxClause    uint64  `json:"cooc_max_clause_count"`
	CoocP50us        float64 `json:"cooc_p50_us"`
	CoocP99us        float64 `json:"cooc_p99_us"`
	PeerBuildSeconds float64 `json:"peer_build_seconds,omitempty"`
	PeerTextBytes    int64   `json:"peer_text_bytes,omitempty"`
	PeerLookupP50us  float64 `json:"peer_lookup_p50_us,omitempty"`
	PeerLookupP99us  float64 `json:"peer_lookup_p99_us,omitempty"`
	PeerBuildRatio   float64 `json:"build_speedup_vs_peer,omitempty"`
	PeerCountRatio   float64 `json:"count_p50_speedup_vs_peer,omitempty"`
}

// Print writes the report as a table with the targets of issue 3.
func (r *Report) Print(w io.Writer) {
	mark := func(ok bool) string {
		if ok {
			return "meets target"
		}
		return "MISSES target"
	}
	fmt.Fprintf(w, "corpus            %s: %d tokens, %d docs, %d shard(s)\n", r.Corpus, r.Tokens, r.Docs, r.Shards)
	fmt.Fprintf(w, "machine load      %s (1/5/15-min load average on %d CPUs before the build)\n", r.LoadAverage, runtime.NumCPU())
	fmt.Fprintf(w, "build             %.1f s wall, %.2fM tokens/s (%s >= 4M); %.1f CPU-s = %.2fM tokens per CPU-second\n", r.BuildSeconds, r.BuildTokensPerS/1e6, mark(r.BuildTokensPerS >= 4e6), r.BuildCPUSeconds, float64(r.Tokens)/r.BuildCPUSeconds/1e6)
	if r.CorpusFile != "" {
		fmt.Fprintf(w, "corpus file       %s, %.0f MB, written in %.1f s before the build (not timed); the build reads it\n", filepath.Base(r.CorpusFile), float64(r.CorpusFileBytes)/1e6, r.WriteSeconds)
		if r.SourceCPUSeconds > 0 {
			fmt.Fprintf(w, "                  reading and parsing it alone takes %.1f CPU-s (measured separately; part of the build's CPU)\n", r.SourceCPUSeconds)
		}
	} else if r.SourceCPUSeconds > 0 && r.BuildCPUSeconds > r.SourceCPUSeconds {
		own := r.BuildCPUSeconds - r.SourceCPUSeconds
		fmt.Fprintf(w, "                  of which %.1f CPU-s produce the corpus text; the rest, %.1f CPU-s, is %.2fM tokens per CPU-second\n", r.SourceCPUSeconds, own, float64(r.Tokens)/own/1e6)
	}
	fmt.Fprintf(w, "disk              %.2f bytes/token (%s <= 9)\n", r.BytesPerToken, mark(r.BytesPerToken <= 9))
	fmt.Fprintf(w, "peak RSS (build)  %.0f MiB = %.1f bytes/token of the largest shard (%s <= 16)\n", float64(r.PeakRSSBytes)/(1<<20), r.PeakBytesPerTok, mark(r.PeakBytesPerTok <= 16))
	fmt.Fprintf(w, "open + verify     %.2f s; index resident in memory: %.0f%% before the queries, %.0f%% after\n", r.OpenSeconds, 100*r.ResidentBefore, 100*r.ResidentAfter)
	fmt.Fprintf(w, "Count             %d queries: p50 %.2f µs, p99 %.2f µs (%s p50 <= 5 µs)\n", r.CountQueries, r.CountP50us, r.CountP99us, mark(r.CountP50us <= 5))
	fmt.Fprintf(w, "CoOccur           %d queries, window %d, clauses <= %d: p50 %.1f µs, p99 %.1f µs (%s p50 <= 2000 µs)\n", r.CoocQueries, r.CoocWindow, r.CoocMaxClause, r.CoocP50us, r.CoocP99us, mark(r.CoocP50us <= 2000))
	if r.PeerBuildSeconds > 0 {
		fmt.Fprintf(w, "peer              index/suffixarray over the same text (%d bytes): build %.1f s, Lookup p50 %.2f µs, p99 %.2f µs\n", r.PeerTextBytes, r.PeerBuildSeconds, r.PeerLookupP50us, r.PeerLookupP99us)
		fmt.Fprintf(w, "ratio             build %.2fx faster, Count p50 %.2fx faster than the peer\n", r.PeerBuildRatio, r.PeerCountRatio)
	}
}

// source makes a fresh document stream; calling it again replays the same documents.
type source func() (corpus.Reader, error)

// zipfReader generates documents of 20..300 Zipf-distributed words ("w<rank>").
type zipfReader struct {
	rng    *rand.Rand
	zipf   *rand.Zipf
	words  []string
	left   int64
	n      int
	buf    strings.Builder
	docLen [2]int
}

func newZipf(seed int64, vocab int, s float64, tokens int64) *zipfReader {
	rng := rand.New(rand.NewSource(seed))
	words := make([]string, vocab)
	for i := range words {
		words[i] = "w" + strconv.FormatInt(int64(i), 36)
	}
	return &zipfReader{rng: rng, zipf: rand.NewZipf(rng, s, 1, uint64(vocab-1)), words: words, left: tokens, docLen: [2]int{20, 300}}
}

func (z *zipfReader) Next() (corpus.Document, error) {
	if z.left <= 0 {
		return corpus.Document{}, io.EOF
	}
	n := z.docLen[0] + z.rng.Intn(z.docLen[1]-z.docLen[0]+1)
	n = int(min(int64(n), max(z.left-1, 1)))
	z.buf.Reset()
	for i := 0; i < n; i++ {
		if i > 0 {
			z.buf.WriteByte(' ')
		}
		z.buf.WriteString(z.words[z.zipf.Uint64()])
	}
	z.left -= int64(n) + 1
	z.n++
	return corpus.Document{ID: strconv.Itoa(z.n), Text: z.buf.String()}, nil
}

func (z *zipfReader) Close() error { return nil }

// repeatReader replays a corpus held in memory until the token budget is spent.
type repeatReader struct {
	docs []corpus.Document
	toks []int
	left int64
	i    int
}

func (r *repeatReader) Next() (corpus.Document, error) {
	if r.left <= 0 || len(r.docs) == 0 {
		return corpus.Document{}, io.EOF
	}
	k := r.i % len(r.docs)
	d := r.docs[k]
	d.ID = d.ID + "#" + strconv.Itoa(r.i/len(r.docs))
	r.i++
	r.left -= int64(r.toks[k] + 1)
	return d, nil
}

func (r *repeatReader) Close() error { return nil }

func (c *Config) source(ctx context.Context) (source, string, error) {
	if c.Corpus == "" {
		return func() (corpus.Reader, error) { return newZipf(c.Seed, c.Vocab, c.ZipfS, c.Tokens), nil },
			fmt.Sprintf("zipf(vocab=%d, s=%.2f, seed=%d)", c.Vocab, c.ZipfS, c.Seed), nil
	}
	var docs []corpus.Document
	var toks []int
	err := corpus.Each(ctx, c.Corpus, c.Format, func(d corpus.Document) error {
		n := 0
		text.EachSpan(d.Text, func(int, int) { n++ })
		docs, toks = append(docs, d), append(toks, n)
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	if len(docs) == 0 {
		return nil, "", errors.New("bench: the corpus is empty")
	}
	return func() (corpus.Reader, error) { return &repeatReader{docs: docs, toks: toks, left: c.Tokens}, nil },
		filepath.Base(c.Corpus) + " repeated", nil
}

func (c *Config) logf(format string, args ...any) {
	w := c.Log
	if w == nil {
		w = c.Progress
	}
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

// Run builds an index of the configured corpus in c.Dir (or a temporary directory) and measures it.
func Run(ctx context.Context, c Config) (*Report, error) {
	if c.Dir == "" {
		d, err := os.MkdirTemp("", "ngram-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		c.Dir = d
	}
	if c.Tokens <= 0 {
		return nil, errors.New("bench: tokens must be positive")
	}
	if c.Vocab == 0 {
		c.Vocab = 1_000_000
	}
	if c.ZipfS == 0 {
		c.ZipfS = 1.1
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Queries == 0 {
		c.Queries = 2000
	}
	if c.Window == 0 {
		c.Window = 1000
	}
	if c.MaxFreq == 0 {
		c.MaxFreq = 100_000
	}
	if c.MinFreq == 0 {
		c.MinFreq = 10
	}
	src, name, err := c.source(ctx)
	if err != nil {
		return nil, err
	}
	rep := &Report{Corpus: name, CoocWindow: c.Window, CoocMaxClause: c.MaxFreq}
	if !c.Stream {
		if err := os.MkdirAll(c.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		path := filepath.Join(c.Dir, "corpus.tsv")
		t := time.Now()
		c.logf("bench: writing %s to %s (not timed)", name, path)
		n, err := writeTSV(ctx, src, path)
		if err != nil {
			return nil, err
		}
		rep.CorpusFile, rep.CorpusFileBytes, rep.WriteSeconds = path, n, time.Since(t).Seconds()
		src = func() (corpus.Reader, error) { return corpus.Open(path, corpus.FormatDPR) }
	}

	// Build, with the peak-RSS counter reset first so that VmHWM is the build's own.
	runtime.GC()
	debug.FreeOSMemory()
	rusage.ResetPeakRSS()
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		rep.LoadAverage = strings.Join(strings.Fields(string(la))[:3], " ")
	}
	cpu0 := rusage.CPUSeconds()
	if c.CPUProfile != "" {
		f, err := os.Create(c.CPUProfile)
		if err != nil {
			return nil, err
		}
		pprof.StartCPUProfile(f)
		defer f.Close()
	}
	r, err := src()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	dir := filepath.Join(c.Dir, "index")
	c.logf("bench: building %s, %d tokens, in %s", name, c.Tokens, dir)
	st, err := ngram.BuildFrom(ctx, r, dir, ngram.BuildOptions{ShardTokens: c.ShardTokens, Progress: c.Progress, Force: true})
	if err != nil {
		return nil, err
	}
	rep.PeakRSSBytes = rusage.PeakRSS()
	if c.CPUProfile != "" {
		pprof.StopCPUProfile()
	}
	rep.BuildCPUSeconds = rusage.CPUSeconds() - cpu0
	rep.Tokens, rep.Docs, rep.Shards = st.Tokens, st.Docs, st.Shards
	rep.BuildSeconds = st.Elapsed.Seconds()
	rep.BuildTokensPerS = float64(st.Tokens) / st.Elapsed.Seconds()
	rep.DiskBytes = st.DiskBytes
	rep.BytesPerToken = float64(st.DiskBytes) / float64(st.Tokens)

	t0 := time.Now()
	ix, err := ngram.OpenIndex(dir, ngram.OpenOptions{Verify: true}) // verifying reads every page: a warm index
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	rep.OpenSeconds = time.Since(t0).Seconds()
	for _, s := range ix.Manifest().Shards {
		rep.LargestShard = max(rep.LargestShard, s.Tokens)
	}
	rep.PeakBytesPerTok = float64(rep.PeakRSSBytes) / float64(rep.LargestShard)

	counts, coocs, err := c.queries(ctx, src, ix)
	if err != nil {
		return nil, err
	}
	c.logf("bench: %d Count and %d CoOccur queries", len(counts), len(coocs))
	rep.CountQueries, rep.CoocQueries = len(counts), len(coocs)
	if res, tot := ix.Resident(); tot > 0 {
		rep.ResidentBefore = float64(res) / float64(tot)
	}
	var durs []time.Duration
	for pass := 0; pass < 2; pass++ { // the first pass warms
		durs = durs[:0]
		for _, q := range counts {
			t := time.Now()
			if _, err := ix.Count(ctx, q); err != nil {
				return nil, err
			}
			durs = append(durs, time.Since(t))
		}
	}
	rep.CountP50us, rep.CountP99us = pct(durs)
	for pass := 0; pass < 2; pass++ {
		durs = durs[:0]
		for _, q := range coocs {
			t := time.Now()
			if _, err := ix.CoOccur(ctx, q[0], q[1], c.Window); err != nil {
				return nil, err
			}
			durs = append(durs, time.Since(t))
		}
	}
	rep.CoocP50us, rep.CoocP99us = pct(durs)
	if res, tot := ix.Resident(); tot > 0 {
		rep.ResidentAfter = float64(res) / float64(tot)
	}

	// The CPU cost of producing the corpus alone (generating, replaying or reading it), to tell it
	// from the rest of the build.
	cpu1 := rusage.CPUSeconds()
	if r, err := src(); err == nil {
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
		r.Close()
	}
	rep.SourceCPUSeconds = rusage.CPUSeconds() - cpu1

	if c.OnMeasured != nil {
		c.OnMeasured(rep)
	}
	if c.Peer {
		if err := c.peer(ctx, src, counts, rep); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// writeTSV writes the documents of src to path as a DPR TSV (id, text, title, with a header). Tabs
// and line breaks inside a text become spaces, which the tokenizer treats alike; a text that starts
// and ends with a quote is CSV-quoted so that the reader's unquoting gives it back unchanged.
func writeTSV(ctx context.Context, src source, path string) (int64, error) {
	r, err := src()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	f, err := os.Create(path)
	if err != nil {
		return 0, fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	bw.WriteString("id\ttext\ttitle\n")
	clean := strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")
	for i := 0; ; i++ {
		if i%1024 == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		d, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		t := d.Text
		if strings.ContainsAny(t, "\t\n\r") {
			t = clean.Replace(t)
		}
		if len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"' {
			t = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
		}
		bw.WriteString(strconv.Itoa(i + 1))
		bw.WriteByte('\t')
		bw.WriteString(t)
		bw.WriteString("\t\n")
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("bench: write %s: %w", path, err)
	}
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return info.Size(), f.Close()
}

func pct(d []time.Duration) (p50, p99 float64) {
	if len(d) == 0 {
		return 0, 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	us := func(x time.Duration) float64 { return float64(x.Nanoseconds()) / 1e3 }
	return us(s[len(s)/2]), us(s[min(len(s)-1, len(s)*99/100)])
}

// queries reads the query file, or samples Count n-grams from the corpus and CoOccur pairs of words
// whose counts lie in [MinFreq, MaxFreq] (half of them from the same document, so that they co-occur).
func (c *Config) queries(ctx context.Context, src source, ix *ngram.Index) ([]string, [][2]string, error) {
	if c.QueryFile != "" {
		return readQueryFile(c.QueryFile)
	}
	rng := rand.New(rand.NewSource(c.Seed + 1))
	r, err := src()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var counts []string
	var coocs [][2]string
	every := max(1, int(rep(c.Tokens)/int64(4*c.Queries)))
	okFreq := func(w string) bool {
		n, err := ix.CountText(w)
		return err == nil && n >= c.MinFreq && n <= c.MaxFreq
	}
	for i := 0; len(counts) < c.Queries || len(coocs) < c.Queries/2; i++ {
		d, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		if i%every != 0 {
			continue
		}
		words := text.Words(d.Text)
		if len(words) < 4 {
			continue
		}
		if len(counts) < c.Queries {
			j := rng.Intn(len(words) - 3)
			counts = append(counts, strings.Join(words[j:j+1+rng.Intn(3)], " "))
		}
		if len(coocs) < c.Queries/2 {
			a, b := words[rng.Intn(len(words))], words[rng.Intn(len(words))]
			if okFreq(a) && okFreq(b) {
				coocs = append(coocs, [2]string{a, b})
			}
		}
	}
	// The other half: independent pairs of words of bounded frequency.
	for tries := 0; len(coocs) < c.Queries && tries < 100*c.Queries; tries++ {
		a := ix.Word(uint32(rng.Intn(max(1, ix.Manifest().VocabSize))))
		b := ix.Word(uint32(rng.Intn(max(1, ix.Manifest().VocabSize))))
		if okFreq(a) && okFreq(b) {
			coocs = append(coocs, [2]string{a, b})
		}
	}
	return counts, coocs, nil
}

func rep(x int64) int64 { return x / 200 } // ~ documents (mean length 160)

func readQueryFile(path string) ([]string, [][2]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var counts []string
	var coocs [][2]string
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		parts := strings.Split(sc.Text(), "\t")
		switch {
		case len(parts) == 2 && parts[0] == "count":
			counts = append(counts, parts[1])
		case len(parts) == 3 && parts[0] == "cooc":
			coocs = append(coocs, [2]string{parts[1], parts[2]})
		case strings.TrimSpace(sc.Text()) == "":
		default:
			return nil, nil, fmt.Errorf("%s:%d: want 'count<TAB>q' or 'cooc<TAB>a<TAB>b'", path, line)
		}
	}
	return counts, coocs, sc.Err()
}

// peer builds index/suffixarray over the same documents joined by newlines and times Lookup of the
// Count queries (byte-level matching: a query may also match inside longer words).
func (c *Config) peer(ctx context.Context, src source, counts []string, rep *Report) error {
	r, err := src()
	if err != nil {
		return err
	}
	defer r.Close()
	var buf []byte
	for {
		d, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		buf = append(buf, d.Text...)
		buf = append(buf, '\n')
	}
	rep.PeerTextBytes = int64(len(buf))
	c.logf("bench: peer index/suffixarray over %d bytes", len(buf))
	t := time.Now()
	sa := suffixarray.New(buf)
	rep.PeerBuildSeconds = time.Since(t).Seconds()
	var durs []time.Duration
	for pass := 0; pass < 2; pass++ {
		durs = durs[:0]
		for _, q := range counts {
			b := []byte(q)
			t := time.Now()
			_ = len(sa.Lookup(b, -1))
			durs = append(durs, time.Since(t))
		}
	}
	rep.PeerLookupP50us, rep.PeerLookupP99us = pct(durs)
	rep.PeerBuildRatio = rep.PeerBuildSeconds / rep.BuildSeconds
	if rep.CountP50us > 0 {
		rep.PeerCountRatio = rep.PeerLookupP50us / rep.CountP50us
	}
	return nil
}
