package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/llmtest"
)

func TestAccounting(t *testing.T) {
	cases := []struct {
		name      string
		noUsage   bool
		logprobs  int
		wantUsage llm.Usage
	}{
		// The fake reports prompt words + 1 (3) and one token per reply word.
		{"server usage is taken as is", false, 0, llm.Usage{PromptTokens: 3, CompletionTokens: 3}},
		// Fallback: completion tokens from the logprob tokens (exact), prompt from harness/text
		// ("today", "'", "s", "weather").
		{"no usage, logprobs: completion counted from tokens", true, 1, llm.Usage{PromptTokens: 4, CompletionTokens: 3, Estimated: true}},
		// Fallback: both from harness/text: "answer to weather" is 3 tokens.
		{"no usage, no logprobs: counted with the fallback tokenizer", true, 0, llm.Usage{PromptTokens: 4, CompletionTokens: 3, Estimated: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.VLLM)
			srv.NoUsage = tc.noUsage
			acc := llm.NewAccounting(newClient(t, srv, nil), nil)
			var calls []llm.Call
			acc.OnCall = func(c llm.Call) { calls = append(calls, c) }
			perExample := &llm.Ledger{}
			ctx := llm.WithLedger(context.Background(), perExample)
			resp, err := acc.Generate(ctx, llm.Request{Prompt: "today's weather", Logprobs: tc.logprobs})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Usage != tc.wantUsage {
				t.Fatalf("usage %+v, want %+v", resp.Usage, tc.wantUsage)
			}
			tot := acc.Ledger().Totals()
			if tot.Calls != 1 || tot.PromptTokens != int64(tc.wantUsage.PromptTokens) || tot.CompletionTokens != int64(tc.wantUsage.CompletionTokens) || (tot.EstimatedCalls == 1) != tc.wantUsage.Estimated {
				t.Fatalf("totals %+v", tot)
			}
			if perExample.Totals() != tot {
				t.Fatalf("per-example ledger %+v differs from %+v", perExample.Totals(), tot)
			}
			if len(calls) != 1 || calls[0].Latency <= 0 || calls[0].Wall < calls[0].Latency {
				t.Fatalf("calls %+v", calls)
			}
		})
	}
}

func TestAccountingRecordsCacheHitsRetriesAndErrors(t *testing.T) {
	srv := llmtest.New(t, llmtest.OpenAI)
	srv.RetryAfter, srv.RetryAfterMs = "", "1"
	c := newClient(t, srv, nil)
	cache := llm.NewCache(c, openStore(t, filepath.Join(t.TempDir(), "c.sqlite")), llm.CacheReadWrite, llm.Identity{})
	acc := llm.NewAccounting(cache, nil)
	ctx := context.Background()
	srv.Enqueue(llmtest.RateLimit, llmtest.ServerError)
	for i := 0; i < 3; i++ {
		if _, err := acc.Generate(ctx, llm.Request{Prompt: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	srv.Enqueue(llmtest.BadRequest)
	if _, err := acc.Generate(ctx, llm.Request{Prompt: "b"}); err == nil {
		t.Fatal("want an error")
	}
	tot := acc.Ledger().Totals()
	want := llm.Totals{Calls: 4, Errors: 1, CacheHits: 2, Retries: 2}
	if tot.Calls != want.Calls || tot.Errors != want.Errors || tot.CacheHits != want.CacheHits || tot.Retries != want.Retries {
		t.Fatalf("totals %+v, want %+v", tot, want)
	}
	// Cache hits count the stored usage again (the call's tokens), so sweeps can report generated
	// tokens whether or not they were paid for.
	if tot.CompletionTokens != 9 {
		t.Fatalf("completion tokens %d, want 9", tot.CompletionTokens)
	}
}

// TestAPIKeyNeverLeaks drives every path that writes something (errors, cache rows, ledger records,
// the resolved config, log output) with a server that echoes the key back, and searches for the key.
func TestAPIKeyNeverLeaks(t *testing.T) {
	srv := llmtest.New(t, llmtest.OpenAI)
	srv.RetryAfter, srv.RetryAfterMs = "", "1"
	// A hostile server: error bodies and replies quote the request's Authorization header.
	srv.Reply = func(string) string { return " ok" }
	echo := llmtest.New(t, llmtest.VLLM)
	var logs bytes.Buffer
	log.SetOutput(&logs)
	defer log.SetOutput(os.Stderr)

	dir := t.TempDir()
	cachePath := filepath.Join(dir, "cache.sqlite")
	t.Setenv(llm.EnvAPIKey, testKey)
	client, err := llm.New(llm.Config{BaseURL: srv.BaseURL(), Model: "m", BackoffBase: 1e6, Cache: llm.CacheConfig{Path: cachePath}})
	if err != nil {
		t.Fatal(err)
	}
	var records []llm.Call
	client.OnCall = func(c llm.Call) { records = append(records, c) }
	ctx := context.Background()
	srv.Enqueue(llmtest.RateLimit, llmtest.ServerError)
	if _, err := client.Generate(ctx, llm.Request{Prompt: "hello", Logprobs: 2}); err != nil {
		t.Fatal(err)
	}
	var errs []string
	for _, f := range []llmtest.Fault{llmtest.BadRequest, llmtest.Truncated} {
		srv.Enqueue(f)
		_, err := client.Generate(ctx, llm.Request{Prompt: "fail " + f.String()})
		if err == nil {
			t.Fatalf("fault %v: no error", f)
		}
		errs = append(errs, err.Error())
	}
	// The echoing server puts the key into its error message.
	echoClient, err := llm.NewOpenAI(llm.Config{BaseURL: echo.BaseURL(), Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	echo.EchoAuth = true
	echo.Enqueue(llmtest.BadRequest, llmtest.Truncated)
	for i := 0; i < 2; i++ {
		_, err = echoClient.Generate(ctx, llm.Request{Prompt: "x"})
		if err == nil {
			t.Fatal("no error from the echoing server")
		}
		errs = append(errs, err.Error())
	}
	if !strings.Contains(strings.Join(errs, "\n"), "[redacted]") {
		t.Fatalf("the echoing server's errors show no redaction: %q", errs)
	}
	client.Close()

	cfgJSON, _ := json.Marshal(client.Backend.(*llm.OpenAI).Config())
	recJSON, _ := json.Marshal(records)
	totJSON, _ := json.Marshal(client.Ledger().Totals())
	places := map[string][]byte{
		"errors":          []byte(strings.Join(errs, "\n")),
		"resolved config": cfgJSON,
		"call records":    recJSON,
		"totals":          totJSON,
		"log output":      logs.Bytes(),
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		places["file "+filepath.Base(f)] = b
	}
	if len(files) == 0 {
		t.Fatal("no cache file written")
	}
	for where, b := range places {
		if bytes.Contains(b, []byte(testKey)) || bytes.Contains(b, []byte(testKey[8:])) {
			t.Errorf("API key found in %s", where)
		}
	}
	// The key did reach the server, so the search above was meaningful.
	if got := srv.Requests()[0].Header.Get("Authorization"); !strings.Contains(got, testKey) {
		t.Fatalf("server did not receive the key: %q", got)
	}
}
