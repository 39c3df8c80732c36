package llm

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

func TestDescribe(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"offline names the backend only", Config{Backend: "offline"}, "backend offline"},
		{"openai names the server", Config{Backend: "openai", BaseURL: "http://127.0.0.1:8000/v1"}, "backend openai at http://127.0.0.1:8000/v1"},
		{"credentials in the URL are redacted", Config{Backend: "openai", BaseURL: "http://u:secret@h/v1"}, "backend openai at " + RedactURL("http://u:secret@h/v1")},
	}
	for _, c := range cases {
		if got := c.cfg.Describe(); got != c.want {
			t.Errorf("%s: Describe() = %q, want %q", c.name, got, c.want)
		}
		if strings.Contains(c.cfg.Describe(), "secret") {
			t.Errorf("%s: the password leaked: %q", c.name, c.cfg.Describe())
		}
	}
	if got := (Usage{PromptTokens: 3, CompletionTokens: 4, Estimated: true}).Describe(); got != "prompt 3, completion 4 (estimated: the server reported none)" {
		t.Errorf("estimated usage: %q", got)
	}
}

func TestResponseWriteText(t *testing.T) {
	var b bytes.Buffer
	Response{Text: "Paris", Model: "m", FinishReason: "stop", Latency: 1500 * time.Microsecond}.WriteText(&b)
	if !strings.Contains(b.String(), "tokens: none") || !strings.Contains(b.String(), `text: "Paris"`) {
		t.Errorf("no tokens: got\n%s", b.String())
	}
	b.Reset()
	Response{Text: "a", Tokens: []TokenLogprob{{Text: "a", Logprob: 0, Top: []Alternative{{Text: "b", Logprob: -1}}}}}.WriteText(&b)
	if !strings.Contains(b.String(), `"b" -1.000`) || !strings.Contains(b.String(), "1.000") {
		t.Errorf("token table lacks the alternative or p: got\n%s", b.String())
	}
	if Prob(UnknownLogprob) != 0 || math.Abs(Prob(math.Log(0.5))-0.5) > 1e-12 {
		t.Error("Prob: want 0 for the unknown log-probability and exp otherwise")
	}
}

func TestParseStops(t *testing.T) {
	got := ParseStops([]string{`\n`, `a\nb`, "x"})
	if len(got) != 3 || got[0] != "\n" || got[1] != "a\nb" || got[2] != "x" {
		t.Errorf("ParseStops = %q; want the typed \\n as newlines, other text kept", got)
	}
	if ParseStops(nil) != nil {
		t.Error("no stops: want nil (a request without stops)")
	}
}
