package metrics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Predictions are a system's answers keyed by example id, as read from a predictions file.
type Predictions struct {
	// Text maps an example id to the predicted answer (raw model output before extraction).
	Text map[string]string
	// IDs lists the ids in file order.
	IDs []string
	// Format is "jsonl" or "hotpotqa".
	Format string
	// Errored counts JSONL records with a non-empty "error" field (as `ragbench predict` writes for a
	// failed example): they are not predictions, so their examples count as missing unless a later
	// record for the same id (a resumed run's retry) succeeded.
	Errored int
	// Null counts records whose prediction field is JSON null: they are not predictions, so their
	// examples count as missing (a null is no answer, not the empty answer).
	Null int
	// Models lists, in order of first appearance, the distinct values of the JSONL records' "model"
	// field (as `ragbench predict` writes it: the model name, or "offline reader (no LLM)"), so that a
	// report can always say which system made the predictions.
	Models []string
}

// maxPredictionLine bounds one JSONL line (16 MiB).
const maxPredictionLine = 16 << 20

// ReadPredictions reads predictions in either of two formats, detected from the content:
//
//   - JSONL, one object per line with an id field ("id", "qid" or "_id"; a string or an integer) and
//     a prediction field ("prediction", "pred" or "answer", a string; null is no prediction, counted in
//     Null, and its example scores as missing). Blank lines are skipped. This
//     also reads DRAGIN/QuCo-RAG output files ({"qid", "prediction", ...}) and `ragbench predict`
//     output, whose records with a non-empty "error" field are skipped and counted in Errored.
//   - the official HotpotQA prediction JSON, an object {"answer": {id: text, ...}, "sp": ...}.
//
// name is used in error messages. A duplicate id is an error naming both lines, since it is
// ambiguous which prediction to score. Invalid UTF-8, a missing field or a field of the wrong type
// is an error naming the line and field.
func ReadPredictions(r io.Reader, name string) (*Predictions, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read predictions %s: %w", name, err)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("predictions %s: file is empty", name)
	}
	if p, ok, err := readHotpotPredictions(trimmed, name); ok || err != nil {
		return p, err
	}
	return readJSONLPredictions(data, name)
}

// readHotpotPredictions reads the HotpotQA format; ok is false when data is not in it.
func readHotpotPredictions(data []byte, name string) (*Predictions, bool, error) {
	if data[0] != '{' {
		return nil, false, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, false, nil // not one JSON object: try JSONL
	}
	raw, ok := top["answer"]
	if !ok || len(bytes.TrimSpace(raw)) == 0 || bytes.TrimSpace(raw)[0] != '{' {
		return nil, false, nil // a one-line JSONL file whose answer field is a string
	}
	if !utf8.Valid(raw) {
		return nil, true, fmt.Errorf("predictions %s: field \"answer\": invalid UTF-8", name)
	}
	p := &Predictions{Text: map[string]string{}, Format: "hotpotqa"}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return nil, true, fmt.Errorf("predictions %s: field \"answer\": %w", name, err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, true, fmt.Errorf("predictions %s: field \"answer\": %w", name, err)
		}
		id, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, true, fmt.Errorf("predictions %s: answer for id %q: %w", name, id, err)
		}
		if string(val) == "null" {
			p.Null++
			continue
		}
		var text string
		if err := json.Unmarshal(val, &text); err != nil {
			return nil, true, fmt.Errorf("predictions %s: answer for id %q: want a string or null, got %s", name, id, truncate(val))
		}
		if _, dup := p.Text[id]; dup {
			return nil, true, fmt.Errorf("predictions %s: duplicate id %q in \"answer\"", name, id)
		}
		p.Text[id] = text
		p.IDs = append(p.IDs, id)
	}
	return p, true, nil
}

func readJSONLPredictions(data []byte, name string) (*Predictions, error) {
	p := &Predictions{Text: map[string]string{}, Format: "jsonl"}
	line := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), maxPredictionLine)
	n := 0
	for sc.Scan() {
		n++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if !utf8.Valid(b) {
			return nil, fmt.Errorf("predictions %s:%d: invalid UTF-8", name, n)
		}
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("predictions %s:%d: not a JSON object: %w", name, n, err)
		}
		id, err := idField(rec)
		if err != nil {
			return nil, fmt.Errorf("predictions %s:%d: %w", name, n, err)
		}
		if m := stringField(rec, "model"); m != "" && !slices.Contains(p.Models, m) {
			p.Models = append(p.Models, m)
		}
		if errored(rec) {
			p.Errored++
			continue
		}
		text, isNull, err := predictionField(rec)
		if err != nil {
			return nil, fmt.Errorf("predictions %s:%d: %w", name, n, err)
		}
		if isNull {
			p.Null++
			continue
		}
		if first, dup := line[id]; dup {
			return nil, fmt.Errorf("predictions %s:%d: duplicate id %q (first on line %d)", name, n, id, first)
		}
		line[id] = n
		p.Text[id] = text
		p.IDs = append(p.IDs, id)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("predictions %s: after line %d: %w", name, n, err)
	}
	if len(p.IDs) == 0 && p.Errored == 0 && p.Null == 0 {
		return nil, fmt.Errorf("predictions %s: no predictions", name)
	}
	return p, nil
}

// errored reports whether a record carries a non-empty string "error" field.
// stringField returns rec[key] when it is a JSON string, else "".
func stringField(rec map[string]json.RawMessage, key string) string {
	var s string
	if raw, ok := rec[key]; ok && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

func errored(rec map[string]json.RawMessage) bool {
	raw, ok := rec["error"]
	if !ok {
		return false
	}
	var s string
	return json.Unmarshal(raw, &s) == nil && s != ""
}

func idField(rec map[string]json.RawMessage) (string, error) {
	for _, k := range []string{"id", "qid", "_id"} {
		raw, ok := rec[k]
		if !ok {
			continue
		}
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			return s, nil
		}
		var num json.Number
		if err := json.Unmarshal(raw, &num); err == nil {
			if _, err := strconv.ParseInt(num.String(), 10, 64); err == nil {
				return num.String(), nil
			}
		}
		return "", fmt.Errorf("field %q: want a string or an integer, got %s", k, truncate(raw))
	}
	return "", fmt.Errorf("missing id field (one of \"id\", \"qid\", \"_id\")")
}

// predictionField returns the record's prediction; isNull reports a JSON null, which is no
// prediction (the example counts as missing), not the empty answer.
func predictionField(rec map[string]json.RawMessage) (text string, isNull bool, err error) {
	for _, k := range []string{"prediction", "pred", "answer"} {
		raw, ok := rec[k]
		if !ok {
			continue
		}
		if string(bytes.TrimSpace(raw)) == "null" {
			return "", true, nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false, fmt.Errorf("field %q: want a string or null, got %s", k, truncate(raw))
		}
		return s, false, nil
	}
	return "", false, fmt.Errorf("missing prediction field (one of \"prediction\", \"pred\", \"answer\")")
}

func truncate(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}
