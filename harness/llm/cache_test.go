package llm_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/llmtest"
)

func openStore(t *testing.T, path string) *llm.Store {
	t.Helper()
	st, err := llm.OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestCachePreventsDuplicateCalls(t *testing.T) {
	srv := llmtest.New(t, llmtest.LlamaCPP)
	c := newClient(t, srv, nil)
	st := openStore(t, filepath.Join(t.TempDir(), "cache.sqlite"))
	cache := llm.NewCache(c, st, llm.CacheReadWrite, llm.Identity{})
	ctx := context.Background()
	req := llm.Request{Prompt: "who wrote Hamlet", Logprobs: 2, MaxTokens: 8}
	first, err := cache.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		again, err := cache.Generate(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if !again.Cached || again.Text != first.Text || len(again.Tokens) != len(first.Tokens) || again.Tokens[1].Top[1] != first.Tokens[1].Top[1] || again.Usage != first.Usage {
			t.Fatalf("cached %+v differs from first %+v", again, first)
		}
	}
	if srv.Count() != 1 {
		t.Fatalf("server saw %d requests, want 1", srv.Count())
	}
	// Everything that changes the output is a different entry.
	seed := 99
	variants := []llm.Request{
		{Prompt: "who wrote Hamlet", Logprobs: 2, MaxTokens: 8, Replicate: 1},
		{Prompt: "who wrote Hamlet", Logprobs: 2, MaxTokens: 8, Seed: &seed},
		{Prompt: "who wrote Hamlet", Logprobs: 3, MaxTokens: 8},
		{Prompt: "who wrote Hamlet", Logprobs: 2, MaxTokens: 9},
		{Prompt: "who wrote Hamlet", Logprobs: 2, MaxTokens: 8, Stop: []string{"."}},
		{Prompt: "who wrote Hamlet", Logprobs: 2, MaxTokens: 8, Temperature: 0.7},
		{Prompt: "who wrote Macbeth", Logprobs: 2, MaxTokens: 8},
		{Endpoint: llm.Chat, Messages: []llm.Message{{Role: "user", Content: "who wrote Hamlet"}}, Logprobs: 2, MaxTokens: 8},
	}
	for _, v := range variants {
		if _, err := cache.Generate(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	if srv.Count() != int64(1+len(variants)) {
		t.Fatalf("server saw %d requests, want %d", srv.Count(), 1+len(variants))
	}
	s := cache.Stats()
	if s.Hits != 5 || s.Misses != int64(1+len(variants)) || s.Writes != s.Misses {
		t.Fatalf("stats %+v", s)
	}
}

func TestCacheConcurrentIdenticalRequestsAreSentOnce(t *testing.T) {
	srv := llmtest.New(t, llmtest.VLLM)
	srv.Delay = 50 * 1e6 // 50 ms
	c := newClient(t, srv, nil)
	cache := llm.NewCache(c, openStore(t, filepath.Join(t.TempDir(), "c.sqlite")), llm.CacheReadWrite, llm.Identity{})
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := cache.Generate(context.Background(), llm.Request{Prompt: "same"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if srv.Count() != 1 {
		t.Fatalf("server saw %d requests, want 1", srv.Count())
	}
}

func TestCacheKeyDependsOnBackend(t *testing.T) {
	req := llm.Request{Endpoint: llm.Completions, Prompt: "p"}
	base := llm.Key(llm.Identity{Backend: "openai", BaseURL: "http://a/v1", Model: "m"}, req)
	for _, id := range []llm.Identity{
		{Backend: "openai", BaseURL: "http://b/v1", Model: "m"},
		{Backend: "openai", BaseURL: "http://a/v1", Model: "m2"},
		{Backend: "offline", BaseURL: "http://a/v1", Model: "m"},
	} {
		if llm.Key(id, req) == base {
			t.Fatalf("identity %+v gives the same key", id)
		}
	}
}

func TestCacheModes(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	req := llm.Request{Prompt: "cached"}
	cases := []struct {
		name      string
		mode      llm.CacheMode
		prefill   bool
		wantCalls int64
		wantErr   error
		wantRows  int64
	}{
		{"off always calls", llm.CacheOff, true, 2, nil, 1},
		{"read answers hits", llm.CacheRead, true, 0, nil, 1},
		{"read does not store misses", llm.CacheRead, false, 2, nil, 0},
		{"readwrite stores the first miss", llm.CacheReadWrite, false, 1, nil, 1},
		{"replay-only answers hits", llm.CacheReplayOnly, true, 0, nil, 1},
		{"replay-only fails on a miss without calling", llm.CacheReplayOnly, false, 0, llm.ErrCacheMiss, 0},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.OpenAI)
			c := newClient(t, srv, nil)
			st := openStore(t, filepath.Join(dir, strconv.Itoa(i)+".sqlite"))
			if tc.prefill {
				if _, err := llm.NewCache(c, st, llm.CacheReadWrite, llm.Identity{}).Generate(ctx, req); err != nil {
					t.Fatal(err)
				}
			}
			before := srv.Count()
			cache := llm.NewCache(c, st, tc.mode, llm.Identity{})
			for k := 0; k < 2; k++ {
				_, err := cache.Generate(ctx, req)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
			}
			if got := srv.Count() - before; got != tc.wantCalls {
				t.Fatalf("%d calls, want %d", got, tc.wantCalls)
			}
			if n, _ := st.Len(ctx); n != tc.wantRows {
				t.Fatalf("%d rows, want %d", n, tc.wantRows)
			}
		})
	}
}

// TestOpenStoreWhileFileLocked opens a new store while another connection holds the write lock of the
// still rollback-journal file, as a second process does while the first creates the cache. Turning on
// WAL rewrites the file header in a read transaction upgraded to a write; SQLite answers that upgrade
// SQLITE_BUSY at once, without waiting out the busy timeout, so OpenStore must retry it.
func TestOpenStoreWhileFileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locked.sqlite")
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil { // holds RESERVED
		t.Fatal(err)
	}
	released := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, err := conn.ExecContext(ctx, "COMMIT")
		released <- err
	}()
	st, err := llm.OpenStore(path)
	if err != nil {
		t.Fatalf("open while another connection holds the write lock: %v", err)
	}
	defer st.Close()
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	k := llm.Key(llm.Identity{}, llm.Request{Prompt: "p"})
	if err := st.Put(ctx, k, llm.Identity{}, llm.Request{Prompt: "p"}, llm.Response{Text: "a"}); err != nil {
		t.Fatal(err)
	}
}

// TestCacheAcrossProcesses runs writer processes (this test binary, re-executed) on one file at once.
func TestCacheAcrossProcesses(t *testing.T) {
	if os.Getenv("LLM_CACHE_HELPER") != "" {
		return
	}
	path := filepath.Join(t.TempDir(), "shared.sqlite")
	const procs, each = 3, 150
	var cmds []*exec.Cmd
	for p := 0; p < procs; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCacheHelperProcess$")
		cmd.Env = append(os.Environ(), "LLM_CACHE_HELPER="+path, fmt.Sprintf("LLM_CACHE_HELPER_ID=%d", p), fmt.Sprintf("LLM_CACHE_HELPER_N=%d", each))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper: %v", err)
		}
	}
	st := openStore(t, path)
	n, err := st.Len(context.Background())
	if err != nil || n != procs*each+each { // each process also writes `each` shared keys
		t.Fatalf("%d rows (%v), want %d", n, err, procs*each+each)
	}
}

// TestCacheHelperProcess is the writer of TestCacheAcrossProcesses; it does nothing in a normal run.
func TestCacheHelperProcess(t *testing.T) {
	path := os.Getenv("LLM_CACHE_HELPER")
	if path == "" {
		t.Skip("helper process only")
	}
	id := os.Getenv("LLM_CACHE_HELPER_ID")
	n, _ := strconv.Atoi(os.Getenv("LLM_CACHE_HELPER_N"))
	st, err := llm.OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	idn := llm.Identity{Backend: "test"}
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 3 {
				own := llm.Request{Prompt: "p" + id + "-" + strconv.Itoa(i)}
				shared := llm.Request{Prompt: "shared-" + strconv.Itoa(i)}
				for _, r := range []llm.Request{own, shared} {
					k := llm.Key(idn, r)
					if err := st.Put(ctx, k, idn, r, llm.Response{Text: r.Prompt}); err != nil {
						t.Error(err)
						return
					}
					if got, ok, err := st.Get(ctx, k); err != nil || !ok || got.Text != r.Prompt {
						t.Errorf("get %q: %v %v %q", r.Prompt, ok, err, got.Text)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
