package ngrambench

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ragbench/ragbench/harness/ngram"
)

func TestRunTemporaryDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	cfg := Config{Tokens: 20000, Vocab: 500, ZipfS: 1.1, Queries: 5, Window: 10, ShardTokens: ngram.DefaultShardTokens}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep == nil {
		t.Fatal("no report")
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "ngram-bench-*")); len(left) != 0 {
		t.Errorf("the temporary build directory is left behind: %v", left)
	}
	dir := t.TempDir()
	cfg.Dir = dir
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) == 0 {
		t.Error("with Dir set, the index is built there and kept")
	}
}
