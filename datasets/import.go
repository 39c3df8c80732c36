package datasets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
)

// The importers convert the official release formats into the Hugging Face parquet layouts (same column
// names, order and nesting as the files the Hub serves), so that Load reads either the same way. Inputs
// are parsed as streams; every error names the input, the record and the field.

// Import formats.
const (
	FormatHotpotQA = "hotpotqa" // the HotpotQA JSON list (hotpot_dev_distractor_v1.json, ...)
	Format2Wiki    = "2wiki"    // 2WikiMultihopQA dev.json / train.json
	FormatNQOpen   = "nq-open"  // NQ-open JSONL (NQ-open.dev.jsonl)
	FormatPubMedQA = "pubmedqa" // PubMedQA ori_pqal.json (a dict keyed by PMID)
)

// ImportFormats lists the formats Import reads.
var ImportFormats = []string{FormatHotpotQA, Format2Wiki, FormatNQOpen, FormatPubMedQA}

// ImportOptions tunes Import.
type ImportOptions struct {
	// Aliases is the 2WikiMultihopQA id_aliases.json file (JSON lines {"Q_id", "aliases", "demonyms"});
	// when set, the aliases of each answer_id fill the answer_aliases column.
	Aliases string
}

// Import reads the official file in (named inName in messages) of the given format and writes the
// parquet layout to out atomically (a temporary file renamed into place). It returns the row count.
func Import(ctx context.Context, format string, in io.Reader, inName, out string, opts ImportOptions) (int, error) {
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp*")
	if err != nil {
		return 0, fmt.Errorf("import %s: %w", inName, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil {
		return 0, fmt.Errorf("import %s: %w", inName, err)
	}
	n, err := importTo(ctx, format, in, inName, tmp, opts)
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return 0, fmt.Errorf("import %s: %w", inName, err)
	}
	return n, nil
}

// rowCheck rejects, at import, the rows that loading would reject: an empty question, and an id that
// an earlier row already has. Rows are numbered from 1 in messages.
type rowCheck struct {
	inName string
	seen   map[string]int
	row    int
}

func (c *rowCheck) check(id, question string) error {
	c.row++
	if strings.TrimSpace(question) == "" {
		return fmt.Errorf("import %s: row %d (id %q): field question is empty", c.inName, c.row, id)
	}
	if id == "" {
		return nil
	}
	if c.seen == nil {
		c.seen = map[string]int{}
	}
	if first, dup := c.seen[id]; dup {
		return fmt.Errorf("import %s: row %d: id %q is also the id of row %d; ids must be unique", c.inName, c.row, id, first)
	}
	c.seen[id] = c.row
	return nil
}

func importTo(ctx context.Context, format string, in io.Reader, inName string, w io.Writer, opts ImportOptions) (int, error) {
	rc := &rowCheck{inName: inName}
	switch format {
	case FormatHotpotQA:
		pw := newRowWriter[hotpotRow](w)
		err := parseHotpotQA(ctx, in, inName, func(r hotpotRow) error {
			if err := rc.check(r.ID, r.Question); err != nil {
				return err
			}
			return pw.add(r)
		})
		return pw.finish(err)
	case Format2Wiki:
		var al map[string][]string
		if opts.Aliases != "" {
			var err error
			if al, err = readAliases(opts.Aliases); err != nil {
				return 0, err
			}
		}
		pw := newRowWriter[wikiRow](w)
		err := parse2Wiki(ctx, in, inName, func(r wikiRow) error {
			if err := rc.check(r.ID, r.Question); err != nil {
				return err
			}
			if al != nil {
				r.AnswerAliases = al[r.AnswerID]
			}
			return pw.add(r)
		})
		return pw.finish(err)
	case FormatNQOpen:
		pw := newRowWriter[nqOpenRow](w)
		err := parseNQOpen(ctx, in, inName, func(r nqOpenRow) error {
			if err := rc.check("", r.Question); err != nil {
				return err
			}
			return pw.add(r)
		})
		return pw.finish(err)
	case FormatPubMedQA:
		pw := newRowWriter[pubmedRow](w)
		err := parsePubMedQA(ctx, in, inName, func(r pubmedRow) error {
			if err := rc.check(strconv.Itoa(int(r.PubID)), r.Question); err != nil {
				return err
			}
			return pw.add(r)
		})
		return pw.finish(err)
	}
	return 0, fmt.Errorf("import %s: unknown format %q (known: %s)", inName, format, strings.Join(ImportFormats, ", "))
}

// rowWriter batches rows into a zstd-compressed parquet writer.
type rowWriter[T any] struct {
	w     *parquet.GenericWriter[T]
	batch []T
	n     int
}

func newRowWriter[T any](w io.Writer) *rowWriter[T] {
	return &rowWriter[T]{w: parquet.NewGenericWriter[T](w, parquet.Compression(&parquet.Zstd))}
}

func (p *rowWriter[T]) add(r T) error {
	p.batch = append(p.batch, r)
	p.n++
	if len(p.batch) >= 256 {
		return p.flush()
	}
	return nil
}

func (p *rowWriter[T]) flush() error {
	if len(p.batch) == 0 {
		return nil
	}
	_, err := p.w.Write(p.batch)
	p.batch = p.batch[:0]
	return err
}

func (p *rowWriter[T]) finish(err error) (int, error) {
	if err == nil {
		err = p.flush()
	}
	if cerr := p.w.Close(); err == nil {
		err = cerr
	}
	if err == nil && p.n == 0 {
		err = errors.New("no records in the input")
	}
	return p.n, err
}

// Parquet rows of the Hugging Face layouts.

type sfCols struct {
	Title  []string `parquet:"title,optional,list"`
	SentID []int32  `parquet:"sent_id,optional,list"`
}

type ctxCols struct {
	Title     []string   `parquet:"title,optional,list"`
	Sentences [][]string `parquet:"sentences,optional,list"`
}

type hotpotRow struct {
	ID              string  `parquet:"id,optional"`
	Question        string  `parquet:"question,optional"`
	Answer          string  `parquet:"answer,optional"`
	Type            string  `parquet:"type,optional"`
	Level           string  `parquet:"level,optional"`
	SupportingFacts sfCols  `parquet:"supporting_facts,optional"`
	Context         ctxCols `parquet:"context,optional"`
}

type wikiRow struct {
	ID              string     `parquet:"id,optional"`
	Type            string     `parquet:"type,optional"`
	Question        string     `parquet:"question,optional"`
	Answer          string     `parquet:"answer,optional"`
	AnswerID        string     `parquet:"answer_id,optional"`
	AnswerAliases   []string   `parquet:"answer_aliases,optional,list"`
	EntityIDs       string     `parquet:"entity_ids,optional"`
	Evidences       [][]string `parquet:"evidences,optional,list"`
	SupportingFacts sfCols     `parquet:"supporting_facts,optional"`
	Context         ctxCols    `parquet:"context,optional"`
}

type nqOpenRow struct {
	Question string   `parquet:"question,optional"`
	Answer   []string `parquet:"answer,optional,list"`
}

type pubmedCtx struct {
	Contexts              []string `parquet:"contexts,optional,list"`
	Labels                []string `parquet:"labels,optional,list"`
	Meshes                []string `parquet:"meshes,optional,list"`
	ReasoningRequiredPred []string `parquet:"reasoning_required_pred,optional,list"`
	ReasoningFreePred     []string `parquet:"reasoning_free_pred,optional,list"`
}

type pubmedRow struct {
	PubID         int32     `parquet:"pubid,optional"`
	Question      string    `parquet:"question,optional"`
	Context       pubmedCtx `parquet:"context,optional"`
	LongAnswer    string    `parquet:"long_answer,optional"`
	FinalDecision string    `parquet:"final_decision,optional"`
}

// recordErr names the input and record of a parse error.
func recordErr(name string, i int, format string, args ...any) error {
	return fmt.Errorf("%s: record %d: %s", name, i, fmt.Sprintf(format, args...))
}

// eachListElement streams the elements of a top-level JSON list into fn.
func eachListElement(ctx context.Context, in io.Reader, name string, fn func(i int, dec *json.Decoder) error) error {
	dec := json.NewDecoder(in)
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%s: not JSON: %w", name, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("%s: want a JSON list of records, found %v", name, tok)
	}
	i := 0
	for dec.More() {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := fn(i, dec); err != nil {
			return err
		}
		i++
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("%s: after record %d: %w (truncated?)", name, i, err)
	}
	return trailing(dec, name)
}

// trailing rejects anything but white space after the top-level value.
func trailing(dec *json.Decoder, name string) error {
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%s: unexpected data after the top-level value", name)
	}
	return nil
}

// checkUTF8 rejects invalid UTF-8 in a text field (encoding/json would silently replace it).
func checkUTF8(raw []byte, name string, i int) error {
	if !utf8.Valid(raw) {
		return recordErr(name, i, "invalid UTF-8")
	}
	return nil
}

type multihopJSON struct {
	ID              string            `json:"_id"`
	Type            string            `json:"type"`
	Level           string            `json:"level"`
	Question        *string           `json:"question"`
	Answer          string            `json:"answer"`
	AnswerID        string            `json:"answer_id"`
	EntityIDs       string            `json:"entity_ids"`
	SupportingFacts []json.RawMessage `json:"supporting_facts"`
	Context         []json.RawMessage `json:"context"`
	Evidences       [][]string        `json:"evidences"`
}

func (m *multihopJSON) common(name string, i int) (sfCols, ctxCols, error) {
	var sf sfCols
	var cx ctxCols
	if m.ID == "" {
		return sf, cx, recordErr(name, i, "_id missing or empty")
	}
	if m.Question == nil {
		return sf, cx, recordErr(name, i, "question missing (id %s)", m.ID)
	}
	for j, raw := range m.SupportingFacts {
		var pair []json.RawMessage
		var title string
		var sent int32
		if json.Unmarshal(raw, &pair) != nil || len(pair) != 2 || json.Unmarshal(pair[0], &title) != nil || json.Unmarshal(pair[1], &sent) != nil {
			return sf, cx, recordErr(name, i, "supporting_facts[%d]: want [title, sentence index], found %s (id %s)", j, clip(raw), m.ID)
		}
		sf.Title = append(sf.Title, title)
		sf.SentID = append(sf.SentID, sent)
	}
	for j, raw := range m.Context {
		var pair []json.RawMessage
		var title string
		var sents []string
		if json.Unmarshal(raw, &pair) != nil || len(pair) != 2 || json.Unmarshal(pair[0], &title) != nil || json.Unmarshal(pair[1], &sents) != nil {
			return sf, cx, recordErr(name, i, "context[%d]: want [title, [sentences]], found %s (id %s)", j, clip(raw), m.ID)
		}
		if sents == nil {
			sents = []string{}
		}
		cx.Title = append(cx.Title, title)
		cx.Sentences = append(cx.Sentences, sents)
	}
	return sf, cx, nil
}

func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

// decodeRecord decodes one record, checking its UTF-8 first.
func decodeRecord(dec *json.Decoder, name string, i int, v any) error {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return recordErr(name, i, "%v", err)
	}
	if err := checkUTF8(raw, name, i); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return recordErr(name, i, "%v", err)
	}
	return nil
}

// parseHotpotQA streams the records of the official HotpotQA JSON list into fn.
func parseHotpotQA(ctx context.Context, in io.Reader, name string, fn func(hotpotRow) error) error {
	return eachListElement(ctx, in, name, func(i int, dec *json.Decoder) error {
		var m multihopJSON
		if err := decodeRecord(dec, name, i, &m); err != nil {
			return err
		}
		sf, cx, err := m.common(name, i)
		if err != nil {
			return err
		}
		return fn(hotpotRow{ID: m.ID, Question: *m.Question, Answer: m.Answer, Type: m.Type, Level: m.Level, SupportingFacts: sf, Context: cx})
	})
}

// parse2Wiki streams the records of a 2WikiMultihopQA dev.json/train.json into fn.
func parse2Wiki(ctx context.Context, in io.Reader, name string, fn func(wikiRow) error) error {
	return eachListElement(ctx, in, name, func(i int, dec *json.Decoder) error {
		var m multihopJSON
		if err := decodeRecord(dec, name, i, &m); err != nil {
			return err
		}
		sf, cx, err := m.common(name, i)
		if err != nil {
			return err
		}
		for j, e := range m.Evidences {
			if len(e) != 3 {
				return recordErr(name, i, "evidences[%d]: want [subject, relation, object], found %d parts (id %s)", j, len(e), m.ID)
			}
		}
		return fn(wikiRow{ID: m.ID, Type: m.Type, Question: *m.Question, Answer: m.Answer, AnswerID: m.AnswerID,
			EntityIDs: m.EntityIDs, Evidences: m.Evidences, SupportingFacts: sf, Context: cx})
	})
}

// parseNQOpen streams the lines of an NQ-open JSONL file ({"question", "answer": [...]}) into fn. Blank
// lines are skipped.
func parseNQOpen(ctx context.Context, in io.Reader, name string, fn func(nqOpenRow) error) error {
	return eachJSONLine(ctx, in, name, func(line int, b []byte) error {
		if !utf8.Valid(b) {
			return fmt.Errorf("%s: line %d: invalid UTF-8", name, line)
		}
		var r struct {
			Question *string         `json:"question"`
			Answer   json.RawMessage `json:"answer"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: line %d: %w", name, line, err)
		}
		if r.Question == nil {
			return fmt.Errorf("%s: line %d: question missing", name, line)
		}
		var ans []string
		if json.Unmarshal(r.Answer, &ans) != nil {
			var one string
			if json.Unmarshal(r.Answer, &one) != nil {
				return fmt.Errorf("%s: line %d: answer: want a list of strings, found %s", name, line, clip(r.Answer))
			}
			ans = []string{one}
		}
		return fn(nqOpenRow{Question: *r.Question, Answer: ans})
	})
}

// parsePubMedQA streams the entries of PubMedQA's ori_pqal.json (a dict keyed by PMID) into fn, in
// file order. The reasoning_*_pred strings become lists of characters, as on the Hugging Face Hub.
func parsePubMedQA(ctx context.Context, in io.Reader, name string, fn func(pubmedRow) error) error {
	dec := json.NewDecoder(in)
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%s: not JSON: %w", name, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("%s: want a JSON object keyed by PMID, found %v", name, tok)
	}
	i := 0
	for dec.More() {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		tok, err := dec.Token()
		if err != nil {
			return recordErr(name, i, "%v", err)
		}
		key, _ := tok.(string)
		pmid, err := strconv.ParseInt(key, 10, 32)
		if err != nil || pmid < 0 {
			return recordErr(name, i, "key %q is not a PMID", key)
		}
		var m struct {
			Question              *string  `json:"QUESTION"`
			Contexts              []string `json:"CONTEXTS"`
			Labels                []string `json:"LABELS"`
			Meshes                []string `json:"MESHES"`
			ReasoningRequiredPred string   `json:"reasoning_required_pred"`
			ReasoningFreePred     string   `json:"reasoning_free_pred"`
			FinalDecision         string   `json:"final_decision"`
			LongAnswer            string   `json:"LONG_ANSWER"`
		}
		if err := decodeRecord(dec, name, i, &m); err != nil {
			return fmt.Errorf("%w (PMID %s)", err, key)
		}
		if m.Question == nil {
			return recordErr(name, i, "QUESTION missing (PMID %s)", key)
		}
		if m.Labels != nil && len(m.Labels) != len(m.Contexts) {
			return recordErr(name, i, "%d CONTEXTS but %d LABELS (PMID %s)", len(m.Contexts), len(m.Labels), key)
		}
		row := pubmedRow{PubID: int32(pmid), Question: *m.Question, LongAnswer: m.LongAnswer, FinalDecision: m.FinalDecision,
			Context: pubmedCtx{Contexts: m.Contexts, Labels: m.Labels, Meshes: m.Meshes,
				ReasoningRequiredPred: chars(m.ReasoningRequiredPred), ReasoningFreePred: chars(m.ReasoningFreePred)}}
		if err := fn(row); err != nil {
			return err
		}
		i++
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("%s: after record %d: %w (truncated?)", name, i, err)
	}
	return trailing(dec, name)
}

// chars splits s into its characters (the Hub's encoding of PubMedQA's reasoning_*_pred strings).
func chars(s string) []string {
	out := make([]string, 0, len(s))
	for _, r := range s {
		out = append(out, string(r))
	}
	return out
}

// readAliases reads 2WikiMultihopQA's id_aliases.json: JSON lines {"Q_id": ..., "aliases": [...]}.
func readAliases(path string) (map[string][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("aliases: %w", err)
	}
	defer f.Close()
	out := map[string][]string{}
	err = eachJSONLine(context.Background(), f, path, func(line int, b []byte) error {
		var r struct {
			QID     string   `json:"Q_id"`
			Aliases []string `json:"aliases"`
		}
		if err := json.Unmarshal(b, &r); err != nil || r.QID == "" {
			return fmt.Errorf("%s: line %d: want {\"Q_id\": ..., \"aliases\": [...]}", path, line)
		}
		out[r.QID] = r.Aliases
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
