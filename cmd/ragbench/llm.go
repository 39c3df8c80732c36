package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/cliutil"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/internal/retry"
)

// llmFlags are the connection flags shared by the llm subcommands.
func llmFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "backend", Value: "openai", Usage: "backend: openai (any OpenAI-compatible server) or offline (the offline reader, no LLM)"},
		&cli.StringFlag{Name: "base-url", Usage: "API root, e.g. http://127.0.0.1:8000/v1 (default $" + llm.EnvBaseURL + ")"},
		&cli.StringFlag{Name: "model", Usage: "model name (default $" + llm.EnvModel + ")"},
		&cli.StringFlag{Name: "api-key-env", Value: llm.EnvAPIKey, Usage: "name of the environment variable holding the API key (the key itself is never a flag)"},
		&cli.DurationFlag{Name: "timeout", Value: 60 * time.Second, Usage: "timeout per attempt"},
		&cli.IntFlag{Name: "max-retries", Value: 3, Usage: "retries on 429, 5xx, timeouts and connection errors (-1: none)"},
		&cli.StringFlag{Name: "cache", Usage: "response cache file (SQLite); empty: no cache"},
		&cli.StringFlag{Name: "cache-mode", Usage: "off, read, readwrite or replay-only (default readwrite with --cache)"},
		&cli.BoolFlag{Name: "chat", Usage: "use /v1/chat/completions instead of /v1/completions with a raw prompt"},
		&cli.IntFlag{Name: "concurrency", Hidden: true, Usage: "deprecated: the requests in flight are --workers (8 where a command has none)"},
		&cli.IntFlag{Name: "rpm", Usage: "requests per minute at most (0: no limit)"},
		&cli.IntFlag{Name: "tpm", Usage: "tokens per minute at most (0: no limit)"},
	}
}

// llmConfig reads the llm flags into a resolved and validated config.
func llmConfig(c *cli.Context) (llm.Config, error) {
	cfg := llmConnection(c, "backend")
	cfg.RPM, cfg.TPM = c.Int("rpm"), c.Int("tpm")
	// One knob: the requests in flight are the command's --workers (8 without one); the old
	// --concurrency still sets them.
	cfg.Concurrency = 8
	if w := c.Int("workers"); w > 0 {
		cfg.Concurrency = w
	}
	if c.IsSet("concurrency") {
		if c.Int("concurrency") <= 0 {
			return cfg, usagef("--workers must be positive")
		}
		cfg.Concurrency = c.Int("concurrency")
	}
	cfg.OnRetry = retry.Printer(c.App.ErrWriter)
	return checkedLLM(c, cfg, true)
}

// llmConnection reads the connection flags of llmFlags, the backend from the flag backend.
func llmConnection(c *cli.Context, backend string) llm.Config {
	return llm.Config{Backend: c.String(backend), BaseURL: c.String("base-url"), Model: c.String("model"), APIKeyEnv: c.String("api-key-env"),
		Timeout: c.Duration("timeout"), MaxRetries: c.Int("max-retries"), Cache: llm.CacheConfig{Path: c.String("cache")}}
}

// checkedLLM sets cfg's cache mode from --cache-mode, checks --timeout when asked, resolves cfg from the
// environment and validates it, naming flags in its errors.
func checkedLLM(c *cli.Context, cfg llm.Config, checkTimeout bool) (llm.Config, error) {
	if m := c.String("cache-mode"); m != "" {
		mode, err := llm.ParseCacheMode(m)
		if err != nil {
			return cfg, usagef("--cache-mode: %v", err)
		}
		cfg.Cache.Mode = mode
	}
	if checkTimeout && cfg.Timeout <= 0 {
		return cfg, usagef("--timeout must be positive")
	}
	cfg = cfg.Resolve(os.Getenv)
	if err := checkLLMFlags(cfg); err != nil {
		return cfg, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usagef("%s", llmKeysAsFlags.Replace(err.Error()))
	}
	return cfg, nil
}

// llmKeysAsFlags rewrites llm.Config's messages, which name config-file keys, with the flags the user
// typed.
var llmKeysAsFlags = strings.NewReplacer("llm.base_url", "--base-url", "llm.model", "--model", "llm.backend", "--backend",
	"llm.cache.mode", "--cache-mode", "llm.cache.path", "--cache", "llm.concurrency, rpm, tpm and max_tokens", "--workers, --rpm, --tpm and --max-tokens",
	"llm durations", "--timeout")

// checkLLMFlags reports what an LLM connection lacks in terms of the flags and environment variables
// the user sets (llm.Config.Validate speaks of config-file keys).
func checkLLMFlags(cfg llm.Config) error {
	var missing []string
	if cfg.Backend == "openai" && cfg.BaseURL == "" {
		missing = append(missing, "--base-url (or $"+llm.EnvBaseURL+")")
	}
	if cfg.Backend == "openai" && cfg.Model == "" {
		missing = append(missing, "--model (or $"+llm.EnvModel+")")
	}
	if len(missing) > 0 {
		return usagef("the openai backend needs %s; --backend offline needs no server", strings.Join(missing, " and "))
	}
	if cfg.Cache.Mode != "" && cfg.Cache.Mode != llm.CacheOff && cfg.Cache.Path == "" {
		return usagef("--cache-mode %s needs --cache FILE", cfg.Cache.Mode)
	}
	return nil
}

func init() {
	register(&cli.Command{
		Name:  "llm",
		Usage: "talk to the generation backend: check a server, complete a prompt with token log-probabilities",
		Subcommands: []*cli.Command{
			{
				Name:      "ping",
				Usage:     "send a one-token request and report the model, latency and usage",
				ArgsUsage: " ",
				Flags:     llmFlags(),
				Action:    llmPing,
			},
			{
				Name:      "complete",
				Usage:     "complete a prompt; print the text, usage and per-token log-probabilities",
				ArgsUsage: "[PROMPT] (or --prompt; - reads standard input)",
				Flags: append(append(llmFlags(), cliutil.FormatFlags("text", "json")...),
					&cli.StringFlag{Name: "prompt", Usage: "the prompt (raw text for completions; the user message with --chat)"},
					&cli.StringFlag{Name: "system", Usage: "system message (with --chat)"},
					&cli.IntFlag{Name: "max-tokens", Value: 64, Usage: "maximum completion tokens"},
					&cli.Float64Flag{Name: "temperature", Value: 0, Usage: "sampling temperature (0: greedy)"},
					&cli.IntFlag{Name: "seed", Value: 0, Usage: "sampling seed"},
					&cli.StringSliceFlag{Name: "stop", Usage: "stop sequence (repeatable; \\n is a newline)"},
					&cli.IntFlag{Name: "logprobs", Value: 5, Usage: "top alternatives per token (0: no log-probabilities, -1: the chosen token's only)"},
					&cli.IntFlag{Name: "replicate", Value: 0, Usage: "replicate index (a separate cache entry)"},
				),
				Action: llmComplete,
			},
			{
				Name:      "bench",
				Usage:     "send many requests from concurrent workers; report throughput and latency p50/p90/p99",
				ArgsUsage: " ",
				Flags: append(llmFlags(),
					&cli.IntFlag{Name: "requests", Value: 200, Usage: "number of requests"},
					&cli.IntFlag{Name: "workers", Aliases: []string{"j"}, Value: 16, Usage: "concurrent workers (requests in flight)"},
					&cli.IntFlag{Name: "max-tokens", Value: 16, Usage: "maximum completion tokens per request"},
					&cli.IntFlag{Name: "logprobs", Value: 0, Usage: "top alternatives per token"},
				),
				Action: llmBench,
			},
		},
	})
}

func newLLM(c *cli.Context) (*llm.Client, llm.Config, error) {
	cfg, err := llmConfig(c)
	if err != nil {
		return nil, cfg, err
	}
	g, err := llm.New(cfg)
	if err != nil {
		return nil, cfg, err
	}
	return g, cfg, nil
}

func llmPing(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return usagef("ping takes no arguments")
	}
	g, cfg, err := newLLM(c)
	if err != nil {
		return err
	}
	defer g.Close()
	resp, took, err := llm.Ping(c.Context, g, c.Bool("chat"))
	if err != nil {
		return fmt.Errorf("ping %s: %w", cfg.Describe(), err)
	}
	fmt.Fprintf(c.App.Writer, "ok %s: model %q answered %q in %v (retries %d, cached %v, usage %s)\n",
		cfg.Describe(), resp.Model, resp.Text, took.Round(time.Millisecond), resp.Retries, resp.Cached, resp.Usage.Describe())
	return nil
}

func llmComplete(c *cli.Context) error {
	format, err := cliutil.OutputFormat(c, "text", "json")
	if err != nil {
		return err
	}
	prompt := c.String("prompt")
	switch {
	case c.Args().Len() > 1:
		return usagef("complete takes at most one PROMPT argument (quote it)")
	case c.Args().Len() == 1 && prompt != "":
		return usagef("give the prompt either as an argument or with --prompt, not both")
	case c.Args().Len() == 1:
		prompt = c.Args().First()
	}
	if prompt == "-" {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			return fmt.Errorf("read prompt from standard input: %w", err)
		}
		prompt = string(b)
	}
	if prompt == "" {
		return usagef("no prompt: pass PROMPT, --prompt or - for standard input")
	}
	g, cfg, err := newLLM(c)
	if err != nil {
		return err
	}
	defer g.Close()
	seed := c.Int("seed")
	req := llm.Request{
		Endpoint:    llm.Completions,
		Prompt:      prompt,
		MaxTokens:   c.Int("max-tokens"),
		Temperature: c.Float64("temperature"),
		Seed:        &seed,
		Logprobs:    c.Int("logprobs"),
		Replicate:   c.Int("replicate"),
	}
	req.Stop = llm.ParseStops(c.StringSlice("stop"))
	if c.Bool("chat") {
		req = req.AsChat(c.String("system"))
	}
	if err := req.Validate(); err != nil {
		return usagef("%v", err)
	}
	resp, err := g.Generate(c.Context, req)
	if err != nil {
		return fmt.Errorf("complete with %s: %w", cfg.Describe(), err)
	}
	w := c.App.Writer
	if format == "json" {
		return cliutil.WriteJSON(w, resp)
	}
	resp.WriteText(w)
	g.WriteCacheStats(cliutil.InfoWriter(c), cfg.Cache)
	return nil
}
