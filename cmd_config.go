package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/reme-dev/reme/index"
	"github.com/reme-dev/reme/jobs/llm"
	"gopkg.in/yaml.v3"
)

// Config is the effective configuration: <workspace>/config.yaml,
// overridden by REME_* environment variables, overridden by flags.
type Config struct {
	// Timezone is an IANA name; empty means the host's local time.
	Timezone string `yaml:"timezone" json:"timezone"`
	// Language selects the prompt set: en or zh.
	Language string `yaml:"language" json:"language"`
	// MaxFileBytes: larger notes and resources are skipped.
	MaxFileBytes int64          `yaml:"max_file_bytes" json:"max_file_bytes"`
	Search       SearchConfig   `yaml:"search" json:"search"`
	LLM          LLMConfig      `yaml:"llm" json:"llm"`
	AutoMemory   MemoryConfig   `yaml:"auto_memory" json:"auto_memory"`
	Resource     ResourceConfig `yaml:"resource" json:"resource"`
	Watch        WatchConfig    `yaml:"watch" json:"watch"`
}

// MemoryConfig holds auto_memory defaults.
type MemoryConfig struct {
	// IncludeImages sends images in conversations to the model (default off).
	IncludeImages bool `yaml:"include_images" json:"include_images"`
	// MaxImageNum is the most images one call may carry.
	MaxImageNum int `yaml:"max_image_num" json:"max_image_num"`
	// MaxMessagesBytes bounds the messages of one call (stdin or @FILE).
	MaxMessagesBytes int64 `yaml:"max_messages_bytes" json:"max_messages_bytes"`
	// MaxTranscriptBytes bounds the Claude Code transcript auto_memory_cc reads.
	MaxTranscriptBytes int64 `yaml:"max_transcript_bytes" json:"max_transcript_bytes"`
	// SessionWait bounds the wait for another run of the same session.
	SessionWait Duration `yaml:"session_wait" json:"session_wait"`
}

// ResourceConfig holds auto_resource defaults.
type ResourceConfig struct {
	IncludeImages bool  `yaml:"include_images" json:"include_images"`
	MaxPixels     int64 `yaml:"max_pixels" json:"max_pixels"`
}

// WatchConfig holds reme watch settings.
type WatchConfig struct {
	Debounce  Duration `yaml:"debounce" json:"debounce"`
	Reconcile Duration `yaml:"reconcile" json:"reconcile"` // full scan interval
}

// SearchConfig holds search defaults.
type SearchConfig struct {
	Limit    int `yaml:"limit" json:"limit"`
	Context  int `yaml:"context" json:"context"`     // lines shown around the hits
	MaxLines int `yaml:"max_lines" json:"max_lines"` // longest window
	// Hybrid fuses keyword and embedding search when a model is
	// configured (each search then embeds its question: one model call).
	Hybrid bool `yaml:"hybrid" json:"hybrid"`
}

// LLMConfig configures the model runtime. The API key is read from the
// environment only, so that it never ends up in a versioned workspace.
// After loading, Provider, BaseURL, Model and VisionModel hold what is in
// effect (see resolveModel in cmd_model.go), with the reasons beside them.
type LLMConfig struct {
	// Provider is cohere or openai (any OpenAI-compatible server); empty
	// chooses from the keys and URLs that are set.
	Provider    string   `yaml:"provider" json:"provider"`
	Model       string   `yaml:"model" json:"model"`
	VisionModel string   `yaml:"vision_model" json:"vision_model"`
	BaseURL     string   `yaml:"base_url" json:"base_url"`
	Timeout     Duration `yaml:"timeout" json:"timeout"`
	MaxRetries  int      `yaml:"max_retries" json:"max_retries"`
	// EmbedModel, EmbedDimensions and RerankModel configure semantic
	// search; empty and 0 keep the provider's defaults, an empty
	// RerankModel turns reranking off.
	EmbedModel      string `yaml:"embed_model" json:"embed_model"`
	EmbedDimensions int    `yaml:"embed_dimensions" json:"embed_dimensions"`
	RerankModel     string `yaml:"rerank_model" json:"rerank_model"`

	APIKey string `yaml:"-" json:"api_key"`
	// ProviderReason says why Provider is in effect, or why none is.
	ProviderReason string `yaml:"-" json:"provider_reason"`
	// APIKeyFrom names the variable the key came from.
	APIKeyFrom string `yaml:"-" json:"api_key_from,omitempty"`
	// Embed is the separate embedding endpoint of ReMe's EMBEDDING_*
	// variables, if they are set.
	Embed *EmbedEndpoint `yaml:"-" json:"embed_endpoint,omitempty"`
}

// Duration is a time.Duration written as "90s" in YAML and JSON.
type Duration time.Duration

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration such as 90s or 2m", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

func defaultConfig() *Config {
	return &Config{
		MaxFileBytes: 20 << 20,
		Search:       SearchConfig{Limit: 5, Context: index.DefaultContext, MaxLines: index.DefaultMaxLines, Hybrid: true},
		LLM:          LLMConfig{Timeout: Duration(120 * time.Second), MaxRetries: 3},
		AutoMemory: MemoryConfig{MaxImageNum: 5, MaxMessagesBytes: 64 << 20, MaxTranscriptBytes: 256 << 20,
			SessionWait: Duration(10 * time.Minute)},
		Resource: ResourceConfig{IncludeImages: true, MaxPixels: 40_000_000},
		Watch:    WatchConfig{Debounce: Duration(300 * time.Millisecond), Reconcile: Duration(5 * time.Minute)},
	}
}

// envOverrides maps environment variables onto configuration fields.
var envOverrides = []struct {
	name string
	set  func(c *Config, v string) error
}{
	{"REME_TIMEZONE", func(c *Config, v string) error { c.Timezone = v; return nil }},
	{"REME_LANGUAGE", func(c *Config, v string) error { c.Language = v; return nil }},
	{"REME_MAX_FILE_BYTES", func(c *Config, v string) error { return parseInt64(v, &c.MaxFileBytes) }},
	{"REME_SEARCH_LIMIT", func(c *Config, v string) error { return parseInt(v, &c.Search.Limit) }},
	{"REME_MODEL", func(c *Config, v string) error { c.LLM.Model = v; return nil }},
	{"REME_VISION_MODEL", func(c *Config, v string) error { c.LLM.VisionModel = v; return nil }},
	{"REME_LLM_BASE_URL", func(c *Config, v string) error { c.LLM.BaseURL = v; return nil }},
	{"REME_LLM_TIMEOUT", func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		c.LLM.Timeout = Duration(d)
		return err
	}},
	{"REME_LLM_MAX_RETRIES", func(c *Config, v string) error { return parseInt(v, &c.LLM.MaxRetries) }},
	{"REME_LLM_PROVIDER", func(c *Config, v string) error { c.LLM.Provider = v; return nil }},
	{"REME_EMBED_MODEL", func(c *Config, v string) error { c.LLM.EmbedModel = v; return nil }},
	{"REME_RERANK_MODEL", func(c *Config, v string) error { c.LLM.RerankModel = v; return nil }},
	// API keys and the variables of other tools are read by resolveModel.
}

func parseInt(s string, dst *int) error {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not a whole number", s)
	}
	*dst = v
	return nil
}

func parseInt64(s string, dst *int64) error {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", s)
	}
	*dst = v
	return nil
}

// loadConfig reads config.yaml (optional) and applies the environment.
func loadConfig(workspace string, getenv func(string) string) (*Config, error) {
	cfg := defaultConfig()
	p := filepath.Join(workspace, "config.yaml")
	raw, err := os.ReadFile(p)
	switch {
	case err == nil:
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		dec.KnownFields(true) // a misspelt key is an error, not silently ignored
		if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
			var te *yaml.TypeError
			if errors.As(err, &te) {
				return nil, fmt.Errorf("%s: %s", p, strings.Join(te.Errors, "; "))
			}
			return nil, fmt.Errorf("%s: %v", p, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	fromFile := cfg.LLM
	for _, e := range envOverrides {
		if v := getenv(e.name); v != "" {
			if err := e.set(cfg, v); err != nil {
				return nil, fmt.Errorf("environment %s: %v", e.name, err)
			}
		}
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	resolveModel(&cfg.LLM, fromFile, getenv)
	return cfg, nil
}

func (c *Config) validate() error {
	if _, err := c.Location(); err != nil {
		return err
	}
	switch c.Language {
	case "", "en", "zh":
	default:
		return fmt.Errorf("language must be en or zh, not %q", c.Language)
	}
	if c.Search.Limit <= 0 {
		return fmt.Errorf("search.limit must be greater than 0, not %d", c.Search.Limit)
	}
	if c.Search.Context < 0 {
		return fmt.Errorf("search.context must be 0 or more, not %d", c.Search.Context)
	}
	if c.Search.MaxLines < 1 {
		return fmt.Errorf("search.max_lines must be at least 1, not %d", c.Search.MaxLines)
	}
	if c.MaxFileBytes <= 0 {
		return fmt.Errorf("max_file_bytes must be greater than 0")
	}
	if c.AutoMemory.MaxMessagesBytes <= 0 || c.AutoMemory.MaxTranscriptBytes <= 0 {
		return fmt.Errorf("auto_memory.max_messages_bytes and auto_memory.max_transcript_bytes must be positive")
	}
	if c.AutoMemory.SessionWait <= 0 {
		return fmt.Errorf("auto_memory.session_wait must be a positive duration")
	}
	if c.AutoMemory.MaxImageNum < 1 {
		return fmt.Errorf("auto_memory.max_image_num must be at least 1")
	}
	if c.Resource.MaxPixels < 1 {
		return fmt.Errorf("resource.max_pixels must be at least 1")
	}
	if c.Watch.Debounce <= 0 || c.Watch.Reconcile <= 0 {
		return fmt.Errorf("watch.debounce and watch.reconcile must be positive durations")
	}
	switch c.LLM.Provider {
	case "", providerCohere, providerOpenAI:
	default:
		return fmt.Errorf("llm.provider must be cohere or openai, not %q", c.LLM.Provider)
	}
	if c.LLM.EmbedDimensions < 0 {
		return fmt.Errorf("llm.embed_dimensions must not be negative")
	}
	return nil
}

// Location is the workspace time zone.
func (c *Config) Location() (*time.Location, error) {
	if c.Timezone == "" {
		return time.Local, nil
	}
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		return nil, fmt.Errorf("timezone %q is not an IANA time zone name (such as Asia/Shanghai or UTC)", c.Timezone)
	}
	return loc, nil
}

// redacted is a copy that is safe to print: keys become "(set)", URLs
// lose their credentials.
func (c *Config) redacted() *Config {
	r := *c
	if r.LLM.APIKey != "" {
		r.LLM.APIKey = "(set)"
	}
	r.LLM.BaseURL = llm.RedactURL(r.LLM.BaseURL)
	if e := r.LLM.Embed; e != nil {
		shown := *e
		shown.BaseURL = llm.RedactURL(shown.BaseURL)
		if shown.APIKey != "" {
			shown.APIKey = "(set)"
		}
		r.LLM.Embed = &shown
	}
	return &r
}

type configCmd struct{}

func (configCmd) Help() string {
	return `Prints the effective configuration: defaults, then <workspace>/config.yaml, then
REME_* environment variables. The "# model:" line says which provider and model
are in use and why. Secrets are shown only as "(set)", credentials in URLs as ***.`
}

func (configCmd) Run(ctx context.Context, app *App) error {
	cfg, err := app.Config()
	if err != nil {
		return err
	}
	r := cfg.redacted()
	if app.Globals.JSON {
		return app.printJSON(r)
	}
	type yamlView struct {
		Config `yaml:",inline"`
		APIKey string `yaml:"api_key"`
	}
	key := "(none)"
	if r.LLM.APIKey != "" {
		key = "(set, from " + r.LLM.APIKeyFrom + ")"
	}
	b, err := yaml.Marshal(yamlView{Config: *r, APIKey: key})
	if err != nil {
		return err
	}
	fmt.Fprintf(app.Stdout, "# workspace: %s\n# model: %s\n%s", app.workspaceDir(), r.LLM.describe(), b)
	return nil
}
