package llm_test

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ragbench/ragbench/harness/llm"
)

func TestWriteCacheStats(t *testing.T) {
	ctx := context.Background()
	var b bytes.Buffer
	plain, err := llm.New(llm.Config{Backend: "test-echo"})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	plain.WriteCacheStats(&b, llm.CacheConfig{})
	if b.Len() != 0 {
		t.Errorf("no cache: wrote %q, want nothing", b.String())
	}
	cc := llm.CacheConfig{Path: filepath.Join(t.TempDir(), "c.sqlite"), Mode: llm.CacheReadWrite}
	g, err := llm.New(llm.Config{Backend: "test-echo", Cache: cc})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	req := llm.Request{Endpoint: llm.Completions, Prompt: "Question: q\nAnswer:", MaxTokens: 8}
	for range 2 {
		if _, err := g.Generate(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	g.WriteCacheStats(&b, cc)
	if want := "cache " + cc.Path + " (readwrite): 1 hit(s), 1 miss(es), 1 write(s)\n"; b.String() != want {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}
}

func TestRequestAsChat(t *testing.T) {
	seed := 3
	base := llm.Request{Endpoint: llm.Completions, Prompt: "hi", MaxTokens: 5, Seed: &seed, Stop: []string{"\n"}}
	cases := []struct {
		system string
		want   []llm.Message
		why    string
	}{
		{"", []llm.Message{{Role: "user", Content: "hi"}}, "the prompt becomes the user message"},
		{"be brief", []llm.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}, "a system message comes first"},
	}
	for _, c := range cases {
		got := base.AsChat(c.system)
		if got.Endpoint != llm.Chat || got.Prompt != "" || !reflect.DeepEqual(got.Messages, c.want) ||
			got.MaxTokens != 5 || got.Seed != &seed || !reflect.DeepEqual(got.Stop, base.Stop) {
			t.Errorf("%s: %+v", c.why, got)
		}
	}
	if base.Endpoint != llm.Completions || base.Prompt != "hi" || base.Messages != nil {
		t.Errorf("AsChat changed its receiver: %+v", base)
	}
}

// recordingGen records the requests it gets and answers "OK".
type recordingGen struct{ reqs []llm.Request }

func (g *recordingGen) Generate(_ context.Context, req llm.Request) (llm.Response, error) {
	g.reqs = append(g.reqs, req)
	return llm.Response{Text: "OK"}, nil
}

func TestPing(t *testing.T) {
	g := &recordingGen{}
	for _, chat := range []bool{false, true} {
		resp, took, err := llm.Ping(context.Background(), g, chat)
		if err != nil || resp.Text != "OK" || took < 0 {
			t.Errorf("chat %v: %+v, %v, %v", chat, resp, took, err)
		}
	}
	want := []llm.Request{
		{Endpoint: llm.Completions, Prompt: "The capital of France is", MaxTokens: 1},
		{Endpoint: llm.Chat, Messages: []llm.Message{{Role: "user", Content: "Say OK."}}, MaxTokens: 1},
	}
	if !reflect.DeepEqual(g.reqs, want) {
		t.Errorf("requests %+v, want one-token completion then chat requests %+v", g.reqs, want)
	}
}
