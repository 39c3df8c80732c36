package corpus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/ragbench/ragbench/datasets"
)

// SourceConfig selects the documents to index: a corpus file (Path, read as Format, or as a parquet
// file with Columns) or the pooled contexts of a dataset (Dataset, a datasets.Load spec). Exactly one of
// Path and Dataset is set.
type SourceConfig struct {
	// Path is a corpus file or folder, opened with Open(Path, Format).
	Path string
	// Format is Path's format; FormatAuto detects it from the name.
	Format Format
	// Columns, when set, reads Path as a parquet file with these columns (Format is then ignored).
	Columns *ParquetColumns
	// Dataset is a dataset whose example contexts are pooled (Pool) into the documents.
	Dataset string
	// DatasetOptions are the load options of Dataset (split, subset, column mapping).
	DatasetOptions datasets.LoadOptions
}

// Validate reports a config that names no source or two.
func (c SourceConfig) Validate() error {
	switch {
	case c.Path == "" && c.Dataset == "":
		return errors.New("corpus source: give a corpus path or a dataset")
	case c.Path != "" && c.Dataset != "":
		return errors.New("corpus source: give a corpus path or a dataset, not both")
	case c.Dataset != "" && (c.Columns != nil || c.Format != FormatAuto):
		return errors.New("corpus source: a format or columns apply to a corpus path, not to a dataset")
	}
	return nil
}

// Source is an opened SourceConfig: it yields a fresh reader over its documents each time one is asked
// for, so that several indexes (or a model fit and an index) can be built from it.
type Source struct {
	// Dataset is the name of the pooled dataset, empty for a corpus file.
	Dataset string
	// Stats are the pool statistics of a dataset source.
	Stats PoolStats
	// Loaded is the dataset a dataset source pooled (its files, row count and warnings); nil otherwise.
	Loaded *datasets.Dataset

	pool []PoolDoc // dataset source: the pooled documents with their sentences
	open func() (Reader, error)
}

// OpenSource opens the source of cfg. A dataset is loaded and pooled at once; a corpus file is opened
// once to fail early on a bad path or format, and again by each Open.
func OpenSource(ctx context.Context, cfg SourceConfig) (*Source, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Dataset != "" {
		ds, err := datasets.Load(ctx, cfg.Dataset, cfg.DatasetOptions)
		if err != nil {
			return nil, err
		}
		docs, st := Pool(ds.Examples)
		plain := make([]Document, len(docs))
		for i, d := range docs {
			plain[i] = d.Document
		}
		return &Source{Dataset: ds.Name, Stats: st, Loaded: ds, pool: docs, open: func() (Reader, error) { return NewSliceReader(plain), nil }}, nil
	}
	if cfg.Columns != nil {
		cols := *cfg.Columns
		return &Source{open: func() (Reader, error) { return OpenParquet(cfg.Path, cols) }}, nil
	}
	r, err := Open(cfg.Path, cfg.Format)
	if err != nil {
		return nil, err
	}
	r.Close()
	return &Source{open: func() (Reader, error) { return Open(cfg.Path, cfg.Format) }}, nil
}

// Open returns a new reader over the source's documents, from the first.
func (s *Source) Open() (Reader, error) { return s.open() }

// Units returns a reader over the units (Units with opt) of the source's documents, in document order.
// A dataset source's documents keep their published sentences; a corpus file's are split by
// SentenceSplitter. Each unit the reader returns is also written to sidecar (WriteUnit: the Unit without
// its Text, which is in the index), so that a unit hit can be traced to its document, span and parent.
func (s *Source) Units(opt UnitOptions, sidecar io.Writer) (Reader, error) {
	u := &unitReader{pool: s.pool, opt: opt, enc: json.NewEncoder(sidecar)}
	if s.pool == nil {
		var err error
		if u.src, err = s.open(); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// unitReader turns each source document into its units and records them in a JSONL sidecar.
type unitReader struct {
	src     Reader    // a corpus file source
	pool    []PoolDoc // or a dataset source
	i       int
	opt     UnitOptions
	pending []Unit
	enc     *json.Encoder
}

func (u *unitReader) Next() (Document, error) {
	for len(u.pending) == 0 {
		var d PoolDoc
		if u.src == nil {
			if u.i >= len(u.pool) {
				return Document{}, io.EOF
			}
			d = u.pool[u.i]
			u.i++
		} else {
			doc, err := u.src.Next()
			if err != nil {
				return Document{}, err
			}
			d = PoolDoc{Document: doc}
		}
		units, err := Units(d, u.opt)
		if err != nil {
			return Document{}, err
		}
		u.pending = units
	}
	un := u.pending[0]
	u.pending = u.pending[1:]
	if err := WriteUnit(u.enc, un); err != nil {
		return Document{}, fmt.Errorf("units sidecar: %w", err)
	}
	return un.Document(), nil
}

func (u *unitReader) Close() error {
	if u.src != nil {
		return u.src.Close()
	}
	return nil
}
