package llm_test

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ragbench/ragbench/harness/llm"
)

// TestConfigYAML: the llm block of a run config reads with durations as text and writes back
// without any key.
func TestConfigYAML(t *testing.T) {
	const in = `
backend: openai
base_url: http://127.0.0.1:8000/v1
model: Qwen/Qwen2.5-7B-Instruct
seed: 3
timeout: 45s
backoff_base: 250ms
concurrency: 16
rpm: 600
tpm: 100000
cache:
  path: runs/cache/llm.sqlite
  mode: replay-only
`
	var cfg llm.Config
	if err := yaml.Unmarshal([]byte(in), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Timeout != 45*time.Second || cfg.BackoffBase != 250*time.Millisecond || cfg.Cache.Mode != llm.CacheReplayOnly || cfg.RPM != 600 || cfg.Seed != 3 {
		t.Fatalf("decoded %+v", cfg)
	}
	if err := cfg.Resolve(func(string) string { return "" }).Validate(); err != nil {
		t.Fatal(err)
	}
	t.Setenv(llm.EnvAPIKey, testKey)
	out, err := yaml.Marshal(cfg.Resolve(nil))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), testKey) || !strings.Contains(string(out), "api_key_env: OPENAI_API_KEY") {
		t.Fatalf("resolved config:\n%s", out)
	}
}
