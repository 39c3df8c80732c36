package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/llm/llmtest"
)

const cliTestKey = "sk-cli-test-SECRET-9876543210"

func TestLLMCommands(t *testing.T) {
	srv := llmtest.New(t, llmtest.VLLM)
	t.Setenv("OPENAI_API_KEY", cliTestKey)
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_MODEL", "")
	cache := filepath.Join(t.TempDir(), "c.sqlite")
	conn := []string{"--base-url", srv.BaseURL(), "--model", "fake-model"}
	slow := llmtest.New(t, llmtest.VLLM)
	slow.Delay, slow.Record = 20*time.Millisecond, false
	slowConn := []string{"--base-url", slow.BaseURL(), "--model", "simulated"}
	cases := []struct {
		name string
		args []string
		code int
		out  []string // substrings of stdout
	}{
		{"ping", append([]string{"llm", "ping"}, conn...), 0, []string{"ok backend openai at http://127.0.0.1", `answered " answer"`}},
		{"ping chat", append([]string{"llm", "ping", "--chat"}, conn...), 0, []string{"ok backend openai"}},
		{"complete prints text, usage and logprobs", append(append([]string{"llm", "complete"}, conn...), "--logprobs", "2", "Q: capital of France"),
			0, []string{`text: " answer to France"`, "usage: prompt 5, completion 3", "tokens: 3", `" answer"  -0.1250`, `" answer~1" -1.125`}},
		{"chat complete", append(append([]string{"llm", "complete", "--chat", "--system", "be brief"}, conn...), "hello there"),
			0, []string{`text: " answer to there"`}},
		{"json output", append(append([]string{"llm", "complete", "--json"}, conn...), "x"), 0, []string{`"text": " answer to x"`}},
		{"cache write then replay", append(append([]string{"llm", "complete", "--cache", cache}, conn...), "cached prompt"), 0, []string{"cached: false"}},
		{"replay-only hit", append(append([]string{"llm", "complete", "--cache", cache, "--cache-mode", "replay-only"}, conn...), "cached prompt"), 0, []string{"cached: true"}},
		{"replay-only miss fails", append(append([]string{"llm", "complete", "--cache", cache, "--cache-mode", "replay-only"}, conn...), "never seen"), 1, nil},
		{"no prompt is a usage error", append([]string{"llm", "complete"}, conn...), 2, nil},
		{"bad cache mode is a usage error", append(append([]string{"llm", "complete", "--cache-mode", "sometimes"}, conn...), "x"), 2, nil},
		{"missing model is a usage error", []string{"llm", "ping", "--base-url", srv.BaseURL()}, 2, nil},
		{"bench against a slow server", append([]string{"llm", "bench", "--workers", "8", "--requests", "40"}, slowConn...),
			0, []string{"requests 40 ok, 0 failed", "latency p50 ", "completion 120"}},
		{"bench against the fake server", append([]string{"llm", "bench", "--workers", "4", "--requests", "8", "--logprobs", "2"}, conn...),
			0, []string{"requests 8 ok, 0 failed"}},
		{"bench with no requests is a usage error", append([]string{"llm", "bench", "--requests", "0"}, conn...), 2, nil},
		{"unknown backend fails", []string{"llm", "ping", "--backend", "nonesuch"}, 1, nil},
		{"offline backend completes with logprobs", []string{"llm", "complete", "--backend", "offline", "--logprobs", "1",
			"Context:\n[1] Paris is the capital of France.\n\nQuestion: What is the capital of France?\nAnswer:"},
			0, []string{"So the answer is Paris.", "model: offline reader (no LLM)", "tokens: "}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tc.code, out, errOut)
			}
			for _, s := range tc.out {
				if !strings.Contains(out, s) {
					t.Fatalf("stdout lacks %q:\n%s", s, out)
				}
			}
			if strings.Contains(out+errOut, cliTestKey) {
				t.Fatal("API key printed")
			}
		})
	}
}

// TestLLMErrorsNameTheFlags: a missing server or model is reported as the flag and variable the user
// sets, not as a config-file key.
func TestLLMErrorsNameTheFlags(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_MODEL", "")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"llm", "ping"}, "needs --model (or $OPENAI_MODEL)"},
		{[]string{"llm", "ping", "--base-url", "http://127.0.0.1:1/v1"}, "needs --model (or $OPENAI_MODEL)"},
		{[]string{"llm", "ping", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--cache-mode", "read"}, "--cache-mode read needs --cache FILE"},
		{[]string{"llm", "ping", "--base-url", "ftp://127.0.0.1:1/v1", "--model", "m"}, "--base-url \"ftp://127.0.0.1:1/v1\": scheme must be http or https"},
	}
	for _, tc := range cases {
		_, stderr, code := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "llm.") {
			t.Errorf("%v: exit %d, %q; want 2 and %q without config keys", tc.args, code, stderr, tc.want)
		}
	}
}
