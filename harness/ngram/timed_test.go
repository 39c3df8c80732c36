package ngram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTimedAnswers(t *testing.T) {
	ctx := context.Background()
	ix, dir := buildDocs(t, []string{"Barack Obama was born in Honolulu", "Obama visited Paris"}, BuildOptions{})
	s, err := Open(ctx, Config{Index: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	obama, known, err := ix.TokenIDs(nil, "Obama")
	if err != nil || !known {
		t.Fatalf("TokenIDs(Obama) = %v, %v, %v", obama, known, err)
	}
	ids := strings.Trim(fmt.Sprint(obama), "[]")

	cases := []struct {
		q     string
		ids   bool
		count uint64
		why   string
	}{
		{"Obama", false, 2, "a phrase, through the counter"},
		{"Honolulu", false, 1, "a phrase in one document"},
		{ids, true, 2, "token ids, counted on the index"},
	}
	for _, c := range cases {
		a, err := s.CountTimed(ctx, c.q, c.ids)
		if err != nil || a.Count != c.count || a.Query != c.q || a.Approx || a.LatencyMS < 0 {
			t.Errorf("%s: CountTimed(%q) = %+v, %v; want count %d", c.why, c.q, a, err, c.count)
		}
	}
	var in *InputError
	if _, err := s.CountTimed(ctx, "1 x", true); !errors.As(err, &in) || !strings.Contains(err.Error(), `token id "x"`) {
		t.Errorf("a malformed id: %v, want an *InputError naming it", err)
	}
	co, err := s.CoOccurTimed(ctx, "Obama", "Honolulu", 10)
	if err != nil || co.Count != 1 || co.A != "Obama" || co.B != "Honolulu" || co.Window != 10 {
		t.Errorf("CoOccurTimed = %+v, %v; want count 1", co, err)
	}

	replay, err := Open(ctx, Config{QuCoCache: filepath.Join("testdata", "quco_cache.json")})
	if err != nil {
		t.Fatal(err)
	}
	defer replay.Close()
	if _, err := replay.CountTimed(ctx, "1 2", true); !errors.Is(err, ErrNoIndex) {
		t.Errorf("ids without a local index: %v, want ErrNoIndex", err)
	}
	if _, err := replay.CountTimed(ctx, "never asked", false); !errors.Is(err, ErrNotCached) {
		t.Errorf("a counter error passes through: %v, want ErrNotCached", err)
	}
}

// TestTimedJSON pins the JSON lines: the keys in sorted order, as a map of the same fields prints.
func TestTimedJSON(t *testing.T) {
	cases := []struct {
		v    any
		want map[string]any
	}{
		{CountAnswer{Query: "a <b>", Count: 3, Approx: true, LatencyMS: 1.5},
			map[string]any{"query": "a <b>", "count": uint64(3), "approx": true, "latency_ms": 1.5}},
		{CoocAnswer{A: "a", B: "b", Window: 7, Count: 2, LatencyMS: 0.25},
			map[string]any{"a": "a", "b": "b", "window": 7, "count": uint64(2), "approx": false, "latency_ms": 0.25}},
	}
	for _, c := range cases {
		got, err1 := json.Marshal(c.v)
		want, err2 := json.Marshal(c.want)
		if err1 != nil || err2 != nil || string(got) != string(want) {
			t.Errorf("%T: %s, want %s (%v, %v)", c.v, got, want, err1, err2)
		}
	}
}

func TestPrefixNTD(t *testing.T) {
	ix, _ := buildDocs(t, []string{"a b c", "a b d", "a c"}, BuildOptions{})
	ab, known, err := ix.TokenIDs(nil, "a b")
	if err != nil || !known {
		t.Fatal(known, err)
	}
	text, err := ix.PrefixNTD("a", false, 0)
	if err != nil || text.PromptCnt != 3 || len(text.Next) != 2 {
		t.Errorf("text prefix a: %+v, %v; want 3 occurrences and 2 next tokens (b, c)", text, err)
	}
	top, err := ix.PrefixNTD(strings.Trim(fmt.Sprint(ab), "[]"), true, 1)
	if err != nil || top.PromptCnt != 2 || len(top.Next) != 1 {
		t.Errorf("ids of a b, top 1: %+v, %v; want 2 occurrences cut to one next token", top, err)
	}
	unknown, err := ix.PrefixNTD("zebra", false, 0)
	if b, _ := json.Marshal(unknown); err != nil || string(b) != `{"next":[],"prompt_cnt":0}` {
		t.Errorf("an unknown word: %s, %v; want an empty distribution", b, err)
	}
	var in *InputError
	if _, err := ix.PrefixNTD("1 -2", true, 0); !errors.As(err, &in) {
		t.Errorf("a malformed id: %v, want an *InputError", err)
	}
}

func TestBuildStatsSummary(t *testing.T) {
	st := BuildStats{Docs: 3, Tokens: 2_000_000, Shards: 2, Elapsed: 2 * time.Second, DiskBytes: 9_000_000}
	want := "built ix: 3 documents, 2000000 tokens, 2 shards, 2.0 s (1.00M tokens/s), 4.50 bytes/token on disk"
	if got := st.Summary("ix"); got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
}
