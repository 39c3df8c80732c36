package extract

import (
	"errors"
	"fmt"

	"github.com/ragbench/ragbench/harness/llm"
)

// The backends of Config.
const (
	// BackendRule is the model-free Rules extractor.
	BackendRule = "rule"
	// BackendLLM is the Prompted extractor.
	BackendLLM = "llm"
)

// Config says which extractor to build. It is plain data with defaults (Defaults) and a Validate
// method; New builds the extractor from it and a generator, Open builds the generator too. YAML and
// JSON tags make it part of a run's resolved config.
type Config struct {
	// Backend is rule (default) or llm ("rules" is read as rule).
	Backend string `yaml:"backend" json:"backend"`
	// Templates is the prompt_templates.json file holding the two extraction templates (llm).
	Templates string `yaml:"templates,omitempty" json:"templates,omitempty"`
	// Format is how the filled template is sent: chat (default: the model's chat template, as the
	// authors call their fine-tuned QuCo-extractor-0.5B), raw or chatml (llm).
	Format Format `yaml:"format,omitempty" json:"format,omitempty"`
	// Parse is how the answer is read: authors (default; their parse_case and what their code keeps),
	// authors-corrected (the same reading, their entity-keeping bugs corrected) or lenient (llm).
	Parse string `yaml:"parse,omitempty" json:"parse,omitempty"`
	// System, MaxTokens and Stop are PromptedOptions' (llm; zero values take its defaults).
	System    string   `yaml:"system,omitempty" json:"system,omitempty"`
	MaxTokens int      `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty"`
	Stop      []string `yaml:"stop,omitempty" json:"stop,omitempty"`
	// LLM is the extractor's own model and endpoint (llm), for example the authors' distilled 0.5B
	// extractor on a local server or gpt-4o-mini; it is independent of the generator that answers.
	LLM llm.Config `yaml:"llm,omitempty" json:"llm,omitempty"`
}

// Defaults returns the config with every unset field given its default. The LLM config is left as
// written: llm.New resolves it (its defaults, then base URL and model from the environment) when Open
// opens the client.
func (c Config) Defaults() Config {
	switch c.Backend {
	case "", "rules":
		c.Backend = BackendRule
	}
	if c.Backend == BackendLLM {
		if c.Format == "" {
			c.Format = Chat
		}
		if c.MaxTokens == 0 {
			c.MaxTokens = 256
		}
		if c.Parse == "" {
			c.Parse = ParseAuthors
		}
	}
	return c
}

// Validate reports every invalid field. It reads no file: a missing templates file is New's error.
func (c Config) Validate() error {
	var errs []error
	switch c.Backend {
	case BackendRule:
	case BackendLLM:
		if c.Templates == "" {
			errs = append(errs, errors.New("extract.templates is empty (the llm backend needs a prompt_templates.json file)"))
		}
		switch c.Format {
		case Raw, Chat, ChatML:
		default:
			errs = append(errs, fmt.Errorf("extract.format %q: want raw, chat or chatml", c.Format))
		}
		if c.Parse != ParseAuthors && c.Parse != ParseAuthorsCorrected && c.Parse != ParseLenient {
			errs = append(errs, fmt.Errorf("extract.parse %q: want %s, %s or %s", c.Parse, ParseAuthors, ParseAuthorsCorrected, ParseLenient))
		}
		if c.MaxTokens < 0 {
			errs = append(errs, fmt.Errorf("extract.max_tokens %d: must not be negative", c.MaxTokens))
		}
	default:
		errs = append(errs, fmt.Errorf("extract.backend %q: want %s or %s", c.Backend, BackendRule, BackendLLM))
	}
	return errors.Join(errs...)
}

// New builds the extractor cfg describes, after Defaults and Validate. The llm backend asks gen (the
// rule backend ignores it); the caller builds gen, usually with llm.New(cfg.LLM), and closes it. Open
// does both.
func New(cfg Config, gen llm.Generator) (Extractor, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("extract config: %w", err)
	}
	if cfg.Backend == BackendRule {
		return NewRules(), nil
	}
	if gen == nil {
		return nil, errors.New("extract: the llm backend needs a generator")
	}
	tmpl, err := LoadTemplates(cfg.Templates)
	if err != nil {
		return nil, err
	}
	return NewPrompted(gen, tmpl, PromptedOptions{Format: cfg.Format, System: cfg.System, MaxTokens: cfg.MaxTokens, Stop: cfg.Stop, Parse: cfg.Parse})
}

// Client is an extractor with the generator Open built for it. Close closes the generator's cache.
type Client struct {
	Extractor
	// LLM is the llm client of the llm backend (nil for rule).
	LLM *llm.Client
}

// Close closes the llm client, if any.
func (c *Client) Close() error {
	if c.LLM == nil {
		return nil
	}
	return c.LLM.Close()
}

// Open builds the extractor cfg describes together with its generator: for the llm backend, the llm
// client stack of cfg.LLM (backend, cache, accounting; the key from the environment variable
// cfg.LLM.APIKeyEnv names).
func Open(cfg Config) (*Client, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("extract config: %w", err)
	}
	if cfg.Backend == BackendRule {
		return &Client{Extractor: NewRules()}, nil
	}
	g, err := llm.New(cfg.LLM)
	if err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	ex, err := New(cfg, g)
	if err != nil {
		g.Close()
		return nil, err
	}
	return &Client{Extractor: ex, LLM: g}, nil
}
