package llm_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/llm"
)

// countingGen answers with the prompt reversed and counts calls; it stands in for a backend such as
// the offline reader that is registered from another package.
type countingGen struct {
	calls atomic.Int64
	block chan struct{}
}

func (g *countingGen) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	g.calls.Add(1)
	if g.block != nil {
		select {
		case <-g.block:
		case <-ctx.Done():
			return llm.Response{}, ctx.Err()
		}
	}
	return llm.Response{Text: "echo " + req.Prompt}, nil
}

var testBackend = &countingGen{}

func init() {
	llm.RegisterBackend("test-echo", func(llm.Config) (llm.Generator, error) { return testBackend, nil })
}

func TestRegistryAndNew(t *testing.T) {
	if b := llm.Backends(); !strings.Contains(strings.Join(b, ","), "openai") || !strings.Contains(strings.Join(b, ","), "test-echo") {
		t.Fatalf("backends %v", b)
	}
	c, err := llm.New(llm.Config{Backend: "test-echo", Cache: llm.CacheConfig{Path: filepath.Join(t.TempDir(), "c.sqlite")}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := testBackend.calls.Load()
	for i := 0; i < 3; i++ {
		resp, err := c.Generate(context.Background(), llm.Request{Endpoint: llm.Completions, Prompt: "abc"})
		if err != nil || resp.Text != "echo abc" {
			t.Fatalf("%+v %v", resp, err)
		}
		// The backend reports no usage: accounting estimates it.
		if !resp.Usage.Estimated || resp.Usage.PromptTokens != 1 || resp.Usage.CompletionTokens != 2 {
			t.Fatalf("usage %+v", resp.Usage)
		}
	}
	if got := testBackend.calls.Load() - before; got != 1 {
		t.Fatalf("backend called %d times, want 1", got)
	}
	if s := c.Cache.Stats(); s.Hits != 2 || s.Misses != 1 {
		t.Fatalf("stats %+v", s)
	}
	if _, err := llm.New(llm.Config{Backend: "nonesuch"}); err == nil || !strings.Contains(err.Error(), "unknown backend") {
		t.Fatalf("unknown backend: %v", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("registering a name twice did not panic")
			}
		}()
		llm.RegisterBackend("test-echo", func(llm.Config) (llm.Generator, error) { return testBackend, nil })
	}()
}

// TestCacheFollowerSurvivesLeaderCancel: when the caller that sent a shared request gives up, the
// callers waiting for the same answer ask again instead of failing.
func TestCacheFollowerSurvivesLeaderCancel(t *testing.T) {
	g := &countingGen{block: make(chan struct{})}
	cache := llm.NewCache(g, openStore(t, filepath.Join(t.TempDir(), "c.sqlite")), llm.CacheReadWrite, llm.Identity{Backend: "t"})
	req := llm.Request{Endpoint: llm.Completions, Prompt: "p"}
	leaderCtx, cancelLeader := context.WithCancel(context.Background())
	leaderErr := make(chan error, 1)
	go func() { _, err := cache.Generate(leaderCtx, req); leaderErr <- err }()
	// Wait (not sleep) for each step, so that a loaded machine cannot reorder them: the leader is in
	// the generator, the follower waits for it, the leader is cancelled, the follower asks again.
	waitFor(t, "the leader to call the generator", func() bool { return g.calls.Load() == 1 })
	followerErr := make(chan error, 1)
	go func() { _, err := cache.Generate(context.Background(), req); followerErr <- err }()
	waitFor(t, "the follower to wait for the leader", func() bool { return cache.Stats().Shared == 1 })
	cancelLeader()
	if err := <-leaderErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("leader error %v", err)
	}
	waitFor(t, "the follower to ask again", func() bool { return g.calls.Load() == 2 })
	close(g.block)
	if err := <-followerErr; err != nil {
		t.Fatalf("follower failed with the leader's cancellation: %v", err)
	}
}

// waitFor polls cond until it holds, failing after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}
