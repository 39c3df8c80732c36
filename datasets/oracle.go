package datasets

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// NQOracleFile is where the Lost-in-the-Middle NQ-open oracle file lies inside a data directory.
const NQOracleFile = "raw/nq_docs/nq-open-oracle.jsonl.gz"

// FindNQOracle returns the path of NQOracleFile in the first data directory (DataDirs) holding it, or ""
// when none does.
func FindNQOracle() string {
	for _, d := range DataDirs() {
		p := filepath.Join(d, filepath.FromSlash(NQOracleFile))
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// ReadOracle reads a file of oracle passages in the Lost-in-the-Middle layout (nq-open-oracle.jsonl,
// gzip-compressed or not): one JSON object per line with "question" and "ctxs" [{"title", "text"}].
// It returns the passages keyed by question text, for pairing with a dataset that ships no contexts
// (NQ-open) by its question. A line that is not such an object is an error naming the line.
func ReadOracle(ctx context.Context, path string) (map[string][]Passage, error) {
	return readOracle(ctx, path, false)
}

// ReadGoldOracle reads an oracle file as ReadOracle does but keeps only the passages marked
// "isgold": true: the gold passages of each question, for gold-document recall. A question with no gold
// passage has no key.
func ReadGoldOracle(ctx context.Context, path string) (map[string][]Passage, error) {
	return readOracle(ctx, path, true)
}

func readOracle(ctx context.Context, path string, goldOnly bool) (map[string][]Passage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read oracle: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("read oracle %s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	out := map[string][]Passage{}
	err = eachJSONLine(ctx, r, path, func(line int, b []byte) error {
		var row struct {
			Question *string `json:"question"`
			Ctxs     []struct {
				Title  string `json:"title"`
				Text   string `json:"text"`
				IsGold bool   `json:"isgold"`
			} `json:"ctxs"`
		}
		if err := json.Unmarshal(b, &row); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if row.Question == nil || strings.TrimSpace(*row.Question) == "" {
			return fmt.Errorf("%s:%d: field \"question\" is missing or empty", path, line)
		}
		for _, c := range row.Ctxs {
			if goldOnly && !c.IsGold {
				continue
			}
			out[*row.Question] = append(out[*row.Question], Passage{Title: c.Title, Text: c.Text})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read oracle: %w", err)
	}
	return out, nil
}
