package reports

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/methods"
)

func TestShortened(t *testing.T) {
	rec := methods.Record{ID: "q1", Question: "Who?", Gold: []string{"Ann"}, Scores: map[string]float64{"em": 1},
		Prediction: methods.Prediction{Answer: "Ann", Raw: strings.Repeat("x", 5000), Counters: methods.Counters{Retrievals: 2},
			Signals:   map[string]float64{"entity_freq": 3},
			Retrieved: []methods.Retrieval{{Query: "q", K: 10, IDs: []string{"1", "2", "3", "4", "5", "6", "7"}}}}}
	ev := methods.Event{Kind: "promote", Text: strings.Repeat("t", 900), Reason: "r", Decision: "select", IDs: []string{"a", "b", "c", "d", "e", "f"}}
	for i := 0; i < 12; i++ {
		ev.Items = append(ev.Items, methods.Item{Name: "unit", Value: float64(i)})
	}
	rec.Trace = []methods.Event{ev, {Kind: "generate", Text: "short"}}
	raw, _ := json.Marshal(rec)
	prev := 1 << 30
	for level := 0; level <= maxShorten; level++ {
		out, err := shortened(raw, &rec, level, "runs/x/hotpotqa/quco.jsonl:7")
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			methods.Record
			Src string `json:"_src"`
			Cut int    `json:"_cut"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("level %d: %v\n%s", level, err, out)
		}
		if got.Src != "runs/x/hotpotqa/quco.jsonl:7" || got.Cut != level {
			t.Errorf("level %d: _src %q _cut %d", level, got.Src, got.Cut)
		}
		if got.ID != "q1" || got.Question != "Who?" || got.Answer != "Ann" || got.Gold[0] != "Ann" || got.Scores["em"] != 1 ||
			got.Counters.Retrievals != 2 || got.Signals["entity_freq"] != 3 {
			t.Errorf("level %d lost a field every level keeps: %s", level, out)
		}
		if len(out) > prev {
			t.Errorf("level %d: %d bytes, more than the level before (%d)", level, len(out), prev)
		}
		prev = len(out)
		switch level {
		case 0:
			if !bytes.Contains(out, []byte(strings.Repeat("x", 5000))) {
				t.Error("level 0 is not the record as written")
			}
		case 1:
			if n := len(got.Trace[0].Items); n != 9 || got.Trace[0].Items[8].Name != "… 4 more" {
				t.Errorf("level 1: %d items, want 8 and a '… 4 more' marker", n)
			}
			if n := len([]rune(got.Trace[0].Text)); n != 201 || len(got.Raw) > 1003 || len(got.Retrieved[0].IDs) != 6 {
				t.Errorf("level 1: text %d runes, raw %d bytes, %d ids", n, len(got.Raw), len(got.Retrieved[0].IDs))
			}
		case 2:
			if got.Trace[0].Items != nil || got.Trace[0].Text != "" || got.Trace[0].Decision != "select" || got.Retrieved[0].IDs != nil || got.Retrieved[0].Query != "q" {
				t.Errorf("level 2 keeps the wrong parts: %s", out)
			}
		case 3:
			if got.Trace != nil || got.Retrieved != nil || got.Raw != "" {
				t.Errorf("level 3 keeps trace, retrievals or raw output: %s", out)
			}
		}
	}
}

// TestHTMLBudget checks that the page's records are shortened as far as the budget needs.
func TestHTMLBudget(t *testing.T) {
	chunks := regexp.MustCompile(`id="rb-chunk-\d+">([^<]*)<`)
	level := regexp.MustCompile(`window.rbShortened = (\d)`)
	sizes := map[int]int{}
	for _, c := range []struct {
		budget, want int
		why          string
	}{
		{0, 0, "the fixture fits the default budget whole"},
		{1, 3, "nothing fits one byte: the last level"},
	} {
		r := fixtureReport(t, Options{RecordBudget: c.budget})
		var b bytes.Buffer
		if err := r.WriteHTML(&b, nil); err != nil {
			t.Fatal(err)
		}
		got := 0
		if m := level.FindSubmatch(b.Bytes()); m != nil {
			got = int(m[1][0] - '0')
		}
		if got != c.want {
			t.Errorf("budget %d: level %d, want %d (%s)", c.budget, got, c.want, c.why)
		}
		total := 0
		for _, m := range chunks.FindAllSubmatch(b.Bytes(), -1) {
			total += len(m[1])
		}
		sizes[got] = total
	}
	// A budget between the two sizes picks a level in between, and fits it.
	mid := (sizes[0] + sizes[3]) / 2
	r := fixtureReport(t, Options{RecordBudget: mid})
	var b bytes.Buffer
	if err := r.WriteHTML(&b, nil); err != nil {
		t.Fatal(err)
	}
	m := level.FindSubmatch(b.Bytes())
	if m == nil || m[1][0] == '0' || m[1][0] == '3' {
		t.Fatalf("budget %d (between %d and %d): level %s, want 1 or 2", mid, sizes[3], sizes[0], m)
	}
	total := 0
	for _, m := range chunks.FindAllSubmatch(b.Bytes(), -1) {
		total += len(m[1])
	}
	if total > mid {
		t.Errorf("records take %d bytes, over the budget %d", total, mid)
	}
}
