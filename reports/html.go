package reports

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"sort"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/ragbench/ragbench/methods"
)

//go:embed assets/report.css
var reportCSS string

//go:embed assets/report.js
var reportJS string

// DefaultRecordBudget is the most bytes the embedded records take in the HTML page by default
// (9 MiB, so that the page stays under 10 MB; see Options.RecordBudget). Records are shortened,
// step by step, until they fit: see shortened.
const DefaultRecordBudget = 9 << 20

// maxShorten is the last shortening level.
const maxShorten = 3

// shortened returns the JSON of a record for the page at a shortening level, with "_src" (its file
// and line) and, above level 0, "_cut" (the level):
//
//	0: the record as written;
//	1: every trace event keeps at most 8 items and 5 ids, texts and queries at most 200 characters;
//	   each retrieval at most 5 ids; the raw output at most 1,000 characters;
//	2: trace events keep round, kind, decision, reason and threshold only; retrievals their queries
//	   only; the raw output at most 300 characters;
//	3: no trace, no retrievals, no raw output.
//
// Scores, counters, signals, the question, gold answers and prediction are always kept.
func shortened(raw []byte, rec *methods.Record, level int, src string) ([]byte, error) {
	if level == 0 && raw != nil {
		if src == "" {
			return raw, nil
		}
		q, _ := json.Marshal(src)
		out := make([]byte, 0, len(raw)+len(q)+10)
		out = append(out, `{"_src":`...)
		out = append(out, q...)
		if len(raw) > 2 {
			out = append(out, ',')
		}
		return append(out, raw[1:]...), nil
	}
	var full methods.Record
	if raw != nil {
		if err := jsonv2.Unmarshal(raw, &full); err != nil {
			return nil, fmt.Errorf("%s: %w", src, err)
		}
	} else {
		full = *rec
	}
	cut := func(s string, n int) string {
		if r := []rune(s); len(r) > n {
			return string(r[:n]) + "…"
		}
		return s
	}
	switch {
	case level >= 3:
		full.Trace, full.Retrieved, full.Raw = nil, nil, ""
	case level == 2:
		for i, e := range full.Trace {
			full.Trace[i] = methods.Event{Round: e.Round, Kind: e.Kind, Decision: e.Decision, Reason: cut(e.Reason, 200), Threshold: e.Threshold}
		}
		for i := range full.Retrieved {
			full.Retrieved[i].IDs = nil
		}
		full.Raw = cut(full.Raw, 300)
	case level == 1:
		for i := range full.Trace {
			e := &full.Trace[i]
			if len(e.Items) > 8 {
				more := len(e.Items) - 8
				e.Items = append(e.Items[:8:8], methods.Item{Name: fmt.Sprintf("… %d more", more)})
			}
			if len(e.IDs) > 5 {
				e.IDs = append(e.IDs[:5:5], fmt.Sprintf("… %d more", len(e.IDs)-5))
			}
			e.Text, e.Query, e.Reason = cut(e.Text, 200), cut(e.Query, 200), cut(e.Reason, 200)
		}
		for i := range full.Retrieved {
			if ids := full.Retrieved[i].IDs; len(ids) > 5 {
				full.Retrieved[i].IDs = append(ids[:5:5], fmt.Sprintf("… %d more", len(ids)-5))
			}
		}
		full.Raw = cut(full.Raw, 1000)
	}
	type page struct {
		Src string `json:"_src,omitempty"`
		Cut int    `json:"_cut,omitempty"`
		methods.Record
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(page{src, level, full}); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(out.Bytes()), nil
}

// ChunkSize is the number of records per compressed chunk of the HTML report's record browser.
const ChunkSize = 1000

// htmlIndex is what the record browser filters on, loaded at start: one entry per record, in
// columns, records ordered by dataset, question id, then row order (so that a chunk holds every
// cell's answer to the same questions and compresses well).
type htmlIndex struct {
	Cells    []string `json:"cells"`
	Datasets []string `json:"datasets"`
	Gens     []string `json:"gens"`
	Chunk    int      `json:"chunk"`
	ID       []string `json:"id"`
	C        []int    `json:"c"`
	D        []int    `json:"d"`
	G        []int    `json:"g"`
	// E is 1 correct (EM or accuracy 1), 0 wrong, -1 failed (error).
	E []int `json:"e"`
	// F is 1 when retrieval fired.
	F []int `json:"f"`
}

func gzipB64(v any) (string, error) {
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return gzipB64Raw(raw.Bytes())
}

func gzipB64Raw(raw []byte) (string, error) {
	var z bytes.Buffer
	zw, err := gzip.NewWriterLevel(&z, gzip.DefaultCompression)
	if err != nil {
		return "", err
	}
	if _, err := zw.Write(raw); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(z.Bytes()), nil
}

func correctOf(r *methods.Record) int {
	if r.Error != "" {
		return -1
	}
	for _, k := range []string{"em", "label_acc"} {
		if v, ok := r.Scores[k]; ok {
			if v >= 1 {
				return 1
			}
			return 0
		}
	}
	return 0
}

// WriteHTML writes the report as one self-contained HTML page: the tables, the figures as inline
// SVG, and a browser of every record (filters by method, dataset, correctness and retrieval; a
// record opens with its prediction, gold answers and trace). Records are embedded as gzip-compressed
// base64 JSON chunks that the page decodes (DecompressionStream) only when it shows them; nothing
// is fetched from the network.
func (r *Report) WriteHTML(w io.Writer, figs []*Figure) error {
	refs := r.htmlRefs()
	budget := r.opts.RecordBudget
	if budget <= 0 {
		budget = DefaultRecordBudget
	}
	total := len(refs)
	encoded, level, err := encodeWithin(refs, budget)
	if err != nil {
		return err
	}
	// Still too big with everything shortened: keep the records of a deterministic sample of the
	// questions (every cell's answer to a kept question stays), as large as fits.
	questions := 0
	kept := 0
	if size := sizeOf(encoded); size > budget {
		keys := questionKeys(r, refs)
		questions = len(keys)
		frac := float64(budget) / float64(size)
		for frac > 0 {
			cut := uint64(frac * 0.95 * float64(^uint64(0)))
			var sample []htmlRef
			kept = 0
			for _, k := range keys {
				if k.hash <= cut {
					kept++
				}
			}
			for _, x := range refs {
				if questionHash(r.Groups[x.g].Dataset, x.rec.ID) <= cut {
					sample = append(sample, x)
				}
			}
			if encoded, err = encodeAll(sample, maxShorten); err != nil {
				return err
			}
			if sizeOf(encoded) <= budget || len(sample) == 0 {
				refs = sample
				break
			}
			frac *= 0.8
		}
	}
	idx := r.htmlIndex(refs)
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(&b, "<title>ragbench report: %s</title>\n<style>\n%s</style>\n</head>\n<body>\n", html.EscapeString(r.runNames()), reportCSS)
	fmt.Fprintf(&b, "<header><h1>ragbench report</h1><p>Runs: %s. Generator: <b>%s</b>. %d records.</p>\n", html.EscapeString(r.runNames()), html.EscapeString(r.generatorsText()), total)
	b.WriteString("<nav><a href=\"#tables\">Tables</a> · <a href=\"#figures\">Figures</a> · <a href=\"#records\">Records</a></nav></header>\n")
	b.WriteString("<section id=\"tables\"><h2>Tables</h2>\n")
	for _, t := range r.Tables {
		b.WriteString("<div class=\"tblwrap\">\n")
		if err := t.HTML(&b); err != nil {
			return err
		}
		b.WriteString("</div>\n")
	}
	b.WriteString("</section>\n<section id=\"figures\"><h2>Figures</h2>\n")
	for _, f := range figs {
		svg, err := f.Render("svg")
		if err != nil {
			return err
		}
		s := string(svg)
		if i := strings.Index(s, "<svg"); i >= 0 {
			s = s[i:]
		}
		fmt.Fprintf(&b, "<figure id=\"fig-%s\">%s<figcaption>%s</figcaption></figure>\n", html.EscapeString(f.Name), s, html.EscapeString(f.Title))
	}
	b.WriteString("</section>\n")
	b.WriteString(`<section id="records"><h2>Records</h2>
<div id="filters">
<label>Method <select id="f-cell"><option value="">all</option></select></label>
<label>Dataset <select id="f-dataset"><option value="">all</option></select></label>
<label>Generator <select id="f-gen"><option value="">all</option></select></label>
<label>Correct <select id="f-correct"><option value="">all</option><option value="1">correct</option><option value="0">wrong</option><option value="-1">failed</option></select></label>
<label>Retrieval <select id="f-fired"><option value="">all</option><option value="1">fired</option><option value="0">did not fire</option></select></label>
<label>Id <input id="f-id" type="search" placeholder="question id"></label>
</div>
`)
	if questions > 0 {
		fmt.Fprintf(&b, "<p class=\"note\" id=\"sampled\">This page holds the records of %d of the %d questions (a fixed sample by question id, every method's answer to each; %d of %d records) to stay small; the tables and figures use all records.</p>\n", kept, questions, len(refs), total)
	}
	b.WriteString(`<p id="count">loading…</p>
<div id="pager"><button id="prev">‹ previous</button> <span id="page"></span> <button id="next">next ›</button></div>
<table id="rec-table" class="tbl"><thead><tr><th>id</th><th>generator</th><th>dataset</th><th>method</th><th>question</th><th>prediction</th><th>gold</th><th>correct</th><th>#Ret</th><th></th></tr></thead><tbody id="rec-body"></tbody></table>
<div id="detail" hidden></div>
</section>
`)
	ix, err := gzipB64(idx)
	if err != nil {
		return err
	}
	fmt.Fprintf(&b, "<script type=\"application/gzip+base64\" id=\"rb-index\">%s</script>\n", ix)
	if level > 0 {
		fmt.Fprintf(&b, "<script>window.rbShortened = %d;</script>\n", level)
	}
	for i, s := range encoded {
		fmt.Fprintf(&b, "<script type=\"application/gzip+base64\" id=\"rb-chunk-%d\">%s</script>\n", i, s)
	}
	fmt.Fprintf(&b, "<script>\n%s</script>\n</body>\n</html>\n", reportJS)
	_, err = w.Write(b.Bytes())
	return err
}

// htmlRef is one record of the page, with where it came from.
type htmlRef struct {
	g, row int
	rec    *methods.Record
	raw    []byte
	src    string
}

// htmlRefs lists every record of the report in page order: by column group, question id, then row.
func (r *Report) htmlRefs() []htmlRef {
	rowIdx := map[string]int{}
	for i, n := range r.rows {
		rowIdx[n] = i
	}
	var refs []htmlRef
	for gi, g := range r.Groups {
		for _, c := range r.cell[g] {
			for i := range c.Records {
				x := htmlRef{g: gi, row: rowIdx[c.Row], rec: &c.Records[i]}
				if i < len(c.Raw) {
					x.raw = c.Raw[i]
				}
				if i < len(c.Lines) && c.Path != "" {
					x.src = fmt.Sprintf("%s:%d", c.Path, c.Lines[i])
				}
				refs = append(refs, x)
			}
		}
	}
	sort.Slice(refs, func(i, j int) bool {
		a, b := refs[i], refs[j]
		if a.g != b.g {
			return a.g < b.g
		}
		if a.rec.ID != b.rec.ID {
			return a.rec.ID < b.rec.ID
		}
		return a.row < b.row
	})
	return refs
}

// htmlIndex builds the browser's index of refs.
func (r *Report) htmlIndex(refs []htmlRef) htmlIndex {
	idx := htmlIndex{Chunk: ChunkSize, Cells: r.rows}
	dsIdx, genIdx := map[string]int{}, map[string]int{}
	for _, g := range r.Groups {
		if _, ok := dsIdx[g.Dataset]; !ok {
			dsIdx[g.Dataset] = len(idx.Datasets)
			idx.Datasets = append(idx.Datasets, g.Dataset)
		}
		if _, ok := genIdx[g.Generator]; !ok {
			genIdx[g.Generator] = len(idx.Gens)
			idx.Gens = append(idx.Gens, g.Generator)
		}
	}
	for _, x := range refs {
		g := r.Groups[x.g]
		idx.ID = append(idx.ID, x.rec.ID)
		idx.C = append(idx.C, x.row)
		idx.D = append(idx.D, dsIdx[g.Dataset])
		idx.G = append(idx.G, genIdx[g.Generator])
		idx.E = append(idx.E, correctOf(x.rec))
		fired := 0
		if x.rec.Counters.Retrievals > 0 {
			fired = 1
		}
		idx.F = append(idx.F, fired)
	}
	return idx
}

type questionKey struct {
	dataset, id string
	hash        uint64
}

// questionKeys returns the distinct (dataset, question id) pairs of refs with their hashes.
func questionKeys(r *Report, refs []htmlRef) []questionKey {
	seen := map[[2]string]bool{}
	var out []questionKey
	for _, x := range refs {
		k := [2]string{r.Groups[x.g].Dataset, x.rec.ID}
		if !seen[k] {
			seen[k] = true
			out = append(out, questionKey{k[0], k[1], questionHash(k[0], k[1])})
		}
	}
	return out
}

// questionHash decides which questions a sampled page keeps: FNV-1a of the dataset and id, mixed
// with the SplitMix64 finaliser so that similar ids spread over the whole range.
func questionHash(dataset, id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(dataset))
	h.Write([]byte{0})
	h.Write([]byte(id))
	z := h.Sum64()
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func sizeOf(chunks []string) int {
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	return n
}

// encodeAll encodes refs as chunks at a shortening level, chunks in parallel.
func encodeAll(refs []htmlRef, level int) ([]string, error) {
	n := (len(refs) + ChunkSize - 1) / ChunkSize
	out := make([]string, n)
	errs := make([]error, n)
	parallel(n, func(i int) { out[i], errs[i] = encodeChunk(refs, i, level) })
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func encodeChunk(refs []htmlRef, i, level int) (string, error) {
	end := min((i+1)*ChunkSize, len(refs))
	var raw bytes.Buffer
	raw.WriteByte('[')
	for j, x := range refs[i*ChunkSize : end] {
		if j > 0 {
			raw.WriteByte(',')
		}
		line, err := shortened(x.raw, x.rec, level, x.src)
		if err != nil {
			return "", err
		}
		raw.Write(line)
	}
	raw.WriteByte(']')
	return gzipB64Raw(raw.Bytes())
}

// encodeWithin encodes refs at the first shortening level whose size fits budget (the last level
// when none does). A level's size is first estimated from a sample of the chunks, so that levels
// that cannot fit are not encoded whole.
func encodeWithin(refs []htmlRef, budget int) ([]string, int, error) {
	n := (len(refs) + ChunkSize - 1) / ChunkSize
	for level := 0; ; level++ {
		if level < maxShorten && n > 16 {
			size, sampled := 0, 0
			for i := 0; i < n; i += n / 8 {
				s, err := encodeChunk(refs, i, level)
				if err != nil {
					return nil, 0, err
				}
				size += len(s)
				sampled++
			}
			if size*n/sampled > budget {
				continue
			}
		}
		out, err := encodeAll(refs, level)
		if err != nil {
			return nil, 0, err
		}
		if sizeOf(out) <= budget || level == maxShorten {
			return out, level, nil
		}
	}
}
