package elastic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/internal/atomicfile"
	"github.com/ragbench/ragbench/internal/retry"
)

// Checkpoint records how far IndexTSV got: every line before Offset is indexed. It is written atomically
// after each successful bulk request.
type Checkpoint struct {
	Path   string `json:"path"`
	Index  string `json:"index"`
	Size   int64  `json:"size"`   // the TSV's size, to notice a changed file
	Line   int    `json:"line"`   // last indexed line (1-based, the header counts)
	ID     string `json:"id"`     // id of that line
	Start  int64  `json:"start"`  // byte offset where that line starts
	Offset int64  `json:"offset"` // byte offset after it
	Docs   int64  `json:"docs"`   // documents indexed so far
}

// IndexOptions tunes IndexTSV.
type IndexOptions struct {
	// Checkpoint is the checkpoint file (default DefaultCheckpoint: in the working directory, since
	// the TSV's own directory may be read-only).
	Checkpoint string
	// Restart ignores an existing checkpoint and starts from the first line.
	Restart bool
	// Create creates the index with the DRAGIN mapping if it does not exist.
	Create bool
	// MaxDocs stops after this many documents in this run (0 for no limit; for tests and trials).
	MaxDocs int64
	// Embedder embeds the passages ("title text", as dense does) into the Config.KNN vector field;
	// required when the config has a knn section. The vectors are L2-normalised; a vector of the wrong
	// dimension, with NaN or Inf entries, or all zero (cosine cannot rank it) is an error naming the
	// file, line and id.
	Embedder dense.Embedder
}

// IndexTSV indexes a DPR TSV (id, text, title, with a header line) into cfg's index with the bulk
// API, as DRAGIN's prep_elastic.py does (_id = the passage id, title and txt fields). It is resumable:
// after each bulk request a checkpoint records the last indexed line, and a later call continues from
// there (re-sending a batch is harmless, as documents are indexed by id). Progress goes to progress.
func IndexTSV(ctx context.Context, cfg Config, path string, progress io.Writer) error {
	return IndexTSVWith(ctx, cfg, path, progress, IndexOptions{})
}

// IndexTSVWith is IndexTSV with options.
func IndexTSVWith(ctx context.Context, cfg Config, path string, progress io.Writer, opt IndexOptions) error {
	c, err := New(cfg)
	if err != nil {
		return err
	}
	return c.IndexTSV(ctx, path, progress, opt)
}

// IndexTSV is the method form of the package function.
func (c *Client) IndexTSV(ctx context.Context, path string, progress io.Writer, opt IndexOptions) error {
	if progress == nil {
		progress = io.Discard
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("elastic index: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("elastic index: %w", err)
	}
	cpPath := opt.Checkpoint
	if cpPath == "" {
		cpPath = DefaultCheckpoint(path, c.cfg.Index)
	}
	cp := Checkpoint{Path: path, Index: c.cfg.Index, Size: st.Size()}
	if !opt.Restart {
		if b, err := os.ReadFile(cpPath); err == nil {
			var old Checkpoint
			if err := json.Unmarshal(b, &old); err != nil {
				return fmt.Errorf("elastic index: checkpoint %s is corrupt (%v); delete it or pass --restart", cpPath, err)
			}
			if old.Index != c.cfg.Index || old.Size != st.Size() {
				return fmt.Errorf("elastic index: checkpoint %s is for index %q and a %d-byte file, not %q and %d bytes; delete it or pass --restart", cpPath, old.Index, old.Size, c.cfg.Index, st.Size())
			}
			if err := verifyCheckpoint(f, old); err != nil {
				return fmt.Errorf("elastic index: checkpoint %s does not match %s: %w; delete it or pass --restart", cpPath, path, err)
			}
			cp = old
			cp.Path = path
			fmt.Fprintf(progress, "elastic index: resuming after line %d (id %s, %d documents already indexed)\n", cp.Line, cp.ID, cp.Docs)
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("elastic index: %w", err)
		}
	}
	var dn *Dense
	if c.cfg.KNN != nil {
		if opt.Embedder == nil {
			return errors.New("elastic index: the config has a knn section but no embedder was given")
		}
		dn = &Dense{c: c, emb: opt.Embedder, knn: *c.cfg.KNN, engine: c.cfg.KNN.Engine}
		if dn.engine == "" {
			info, err := c.Ping(ctx)
			if err != nil {
				return fmt.Errorf("elastic index: %w", err)
			}
			dn.engine = info.Distribution
		}
		if opt.Create {
			var desc map[string]string
			if d, ok := opt.Embedder.(dense.Describer); ok {
				desc = d.Describe()
			}
			if err := c.createKNNIndex(ctx, dn.engine, opt.Embedder.Dim(), desc, true); err != nil {
				return err
			}
		}
		// An existing index of another dimension or embedder is refused before anything is sent.
		if err := dn.checkMapping(ctx); err != nil {
			return fmt.Errorf("elastic index: %w", err)
		}
	} else if opt.Create {
		if err := c.CreateIndex(ctx, true); err != nil {
			return err
		}
	}
	if _, err := f.Seek(cp.Offset, io.SeekStart); err != nil {
		return fmt.Errorf("elastic index: %w", err)
	}
	r := bufio.NewReaderSize(f, 1<<20)
	var (
		batch     bytes.Buffer
		docs      []corpus.Document
		lines     []int
		ids       []string
		pending   Checkpoint // checkpoint after the lines in batch
		offset    = cp.Offset
		line      = cp.Line
		start     = time.Now()
		startDocs = cp.Docs
		lastLog   time.Time
		thisRun   int64
	)
	pending = cp
	enc := json.NewEncoder(&batch)
	enc.SetEscapeHTML(false)
	flush := func() error {
		if len(ids) == 0 {
			return nil
		}
		var vecs [][]float32
		if dn != nil {
			texts := make([]string, len(docs))
			for i, d := range docs {
				texts[i] = strings.TrimSpace(d.Title + " " + d.Text)
			}
			var err error
			vecs, err = dn.emb.Embed(ctx, texts, dense.Passage)
			if err != nil {
				return fmt.Errorf("elastic index: embed lines %d..%d of %s: %w", lines[0], lines[len(lines)-1], path, err)
			}
			if len(vecs) != len(docs) {
				return fmt.Errorf("elastic index: embedder returned %d vectors for %d passages", len(vecs), len(docs))
			}
		}
		for i, d := range docs {
			src := map[string]any{c.cfg.TitleField: d.Title, c.cfg.TextField: d.Text}
			if dn != nil {
				v, ok, err := unitVector(vecs[i], dn.emb.Dim())
				if err == nil && !ok {
					err = errors.New("the embedding is all zero, which cosine similarity cannot rank")
				}
				if err != nil {
					return fmt.Errorf("elastic index: %s:%d: passage %q: %w", path, lines[i], d.ID, err)
				}
				src[dn.knn.Field] = v
			}
			enc.Encode(map[string]any{"index": map[string]any{"_index": c.cfg.Index, "_id": d.ID}})
			enc.Encode(src)
		}
		if err := c.bulk(ctx, batch.Bytes(), ids); err != nil {
			return fmt.Errorf("elastic index: lines up to %d of %s: %w", pending.Line, path, err)
		}
		cp = pending
		cp.Docs += int64(len(ids))
		pending = cp
		batch.Reset()
		ids, docs, lines = ids[:0], docs[:0], lines[:0]
		if err := writeCheckpoint(cpPath, cp); err != nil {
			return err
		}
		if time.Since(lastLog) > 2*time.Second {
			lastLog = time.Now()
			el := time.Since(start).Seconds()
			fmt.Fprintf(progress, "elastic index: %d documents (line %d, %.1f%% of the file), %.0f docs/s\n",
				cp.Docs, cp.Line, 100*float64(cp.Offset)/float64(max(st.Size(), 1)), float64(cp.Docs-startDocs)/el)
		}
		return nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("elastic index: stopped after line %d (checkpoint %s): %w", cp.Line, cpPath, err)
		}
		if opt.MaxDocs > 0 && thisRun >= opt.MaxDocs {
			break
		}
		raw, err := r.ReadBytes('\n')
		if len(raw) == 0 && errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("elastic index: read %s: %w", path, err)
		}
		lineStart := offset
		offset += int64(len(raw))
		line++
		s := strings.TrimRight(string(raw), "\r\n")
		if s == "" || (line == 1 && strings.HasPrefix(s, "id\t")) {
			pending.Line, pending.Offset, pending.Start = line, offset, lineStart
			continue
		}
		doc, perr := corpus.ParseDPRLine(s)
		if perr != nil {
			return fmt.Errorf("elastic index: %s:%d: %w", path, line, perr)
		}
		id := doc.ID
		docs = append(docs, doc)
		lines = append(lines, line)
		ids = append(ids, id)
		thisRun++
		pending.Line, pending.ID, pending.Start, pending.Offset = line, id, lineStart, offset
		if len(ids) >= c.cfg.BulkDocs {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	fmt.Fprintf(progress, "elastic index: done, %d documents in %s (%d this run, %.1fs); checkpoint %s\n",
		cp.Docs, c.cfg.Index, thisRun, time.Since(start).Seconds(), cpPath)
	return nil
}

// verifyCheckpoint checks that the line recorded in cp still starts at cp.Start with cp.ID.
func verifyCheckpoint(f *os.File, cp Checkpoint) error {
	if cp.Offset == 0 {
		return nil
	}
	if cp.Start < 0 || cp.Offset <= cp.Start || cp.Offset-cp.Start > 64<<20 {
		return errors.New("bad offsets")
	}
	buf := make([]byte, cp.Offset-cp.Start)
	if _, err := f.ReadAt(buf, cp.Start); err != nil {
		return fmt.Errorf("read line %d: %w", cp.Line, err)
	}
	if cp.ID == "" {
		return nil
	}
	id, _, _ := strings.Cut(string(buf), "\t")
	if id != cp.ID {
		return fmt.Errorf("line %d has id %q, the checkpoint says %q", cp.Line, id, cp.ID)
	}
	return nil
}

func writeCheckpoint(path string, cp Checkpoint) error {
	b, _ := json.MarshalIndent(cp, "", "  ")
	if err := atomicfile.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("elastic index: checkpoint: %w", err)
	}
	return nil
}

// bulk sends one bulk body. Items rejected with a temporary error (429, es_rejected_execution) are
// re-sent, up to MaxRetries times; other item errors fail with the first one's id and reason.
func (c *Client) bulk(ctx context.Context, body []byte, ids []string) error {
	lines := bytes.SplitAfter(body, []byte("\n"))
	for attempt := 0; ; attempt++ {
		b, err := c.do(ctx, http.MethodPost, "/_bulk", body, "application/x-ndjson")
		if err != nil {
			return err
		}
		var r struct {
			Errors bool `json:"errors"`
			Items  []map[string]struct {
				ID     string          `json:"_id"`
				Status int             `json:"status"`
				Error  json.RawMessage `json:"error"`
			} `json:"items"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("bulk: bad response: %w", err)
		}
		if len(r.Items) != len(ids) {
			return fmt.Errorf("bulk: %d items in the response for %d documents", len(r.Items), len(ids))
		}
		if !r.Errors {
			return nil
		}
		var resend bytes.Buffer
		var retryIDs []string
		for i, item := range r.Items {
			for _, res := range item {
				if len(res.Error) == 0 || string(res.Error) == "null" {
					continue
				}
				ee := parseError(res.Status, append(append([]byte(`{"error":`), res.Error...), '}'))
				if !ee.Temporary() {
					return fmt.Errorf("bulk: document %q: %w", ids[i], ee)
				}
				resend.Write(lines[2*i])
				resend.Write(lines[2*i+1])
				retryIDs = append(retryIDs, ids[i])
			}
		}
		if len(retryIDs) == 0 {
			return nil
		}
		if attempt >= c.cfg.MaxRetries {
			return fmt.Errorf("bulk: %d documents still rejected after %d attempts (first %q)", len(retryIDs), attempt+1, retryIDs[0])
		}
		if err := retry.Sleep(ctx, c.cfg.Backoff<<attempt); err != nil {
			return err
		}
		body, ids = resend.Bytes(), retryIDs
		lines = bytes.SplitAfter(body, []byte("\n"))
	}
}

// DefaultCheckpoint returns the default checkpoint path for a TSV and index:
// <tsv base name>.<index>.checkpoint.json in the working directory.
func DefaultCheckpoint(tsv, index string) string {
	return filepath.Base(tsv) + "." + index + ".checkpoint.json"
}
