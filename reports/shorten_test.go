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

// fixtureLevelSizes returns the size of the fixture's records in the page at each shortening level.
func fixtureLevelSizes(t *testing.T, r *Report) []int {
	t.Helper()
	refs := r.htmlRefs()
	var sizes []int
	for level := 0; level <= maxShorten; level++ {
		enc, err := encodeAll(refs, level)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, sizeOf(enc))
	}
	return sizes
}

// TestHTMLBudget checks that the page's records are shortened, then sampled, only as far as the
// budget needs.
func TestHTMLBudget(t *testing.T) {
	chunks := regexp.MustCompile(`id="rb-chunk-\d+">([^<]*)<`)
	levelRE := regexp.MustCompile(`window.rbShortened = (\d)`)
	sampledRE := regexp.MustCompile(`id="sampled">This page holds the records of (\d+) of the (\d+) questions`)
	sizes := fixtureLevelSizes(t, fixtureReport(t, Options{}))
	if !(sizes[2] < sizes[0] && sizes[3] < sizes[2]) {
		t.Fatalf("level sizes %v: levels 2 and 3 should shrink the fixture", sizes)
	}
	// want is the first level that fits, or the last one and a sample.
	want := func(budget int) (int, bool) {
		for l, s := range sizes {
			if s <= budget {
				return l, false
			}
		}
		return maxShorten, true
	}
	type tc struct {
		budget, level int
		sampled       bool
		why           string
	}
	cases := []tc{{0, 0, false, "the fixture fits the default budget whole"}}
	for _, b := range []struct {
		budget int
		why    string
	}{
		{sizes[0], "exactly the whole size"},
		{sizes[0] - 1, "one byte less"},
		{sizes[2], "level 2's size"},
		{sizes[3], "level 3's size"},
		{sizes[3] * 2 / 3, "below level 3: a sample of the questions"},
		{1, "nothing fits: an empty sample"},
	} {
		l, s := want(b.budget)
		cases = append(cases, tc{b.budget, l, s, b.why})
	}
	for _, c := range cases {
		r := fixtureReport(t, Options{RecordBudget: c.budget})
		var b bytes.Buffer
		if err := r.WriteHTML(&b, nil); err != nil {
			t.Fatal(err)
		}
		level := 0
		if m := levelRE.FindSubmatch(b.Bytes()); m != nil {
			level = int(m[1][0] - '0')
		}
		total := 0
		for _, m := range chunks.FindAllSubmatch(b.Bytes(), -1) {
			total += len(m[1])
		}
		sampled := sampledRE.FindSubmatch(b.Bytes())
		if level != c.level || (sampled != nil) != c.sampled {
			t.Errorf("budget %d: level %d, sampled %v; want %d, %v (%s)", c.budget, level, sampled != nil, c.level, c.sampled, c.why)
		}
		budget := c.budget
		if budget == 0 {
			budget = DefaultRecordBudget
		}
		if total > budget {
			t.Errorf("budget %d: the records take %d bytes", c.budget, total)
		}
	}
}
