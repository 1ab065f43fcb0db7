package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/reme-dev/reme/index"
	"github.com/reme-dev/reme/jobs"
	"github.com/reme-dev/reme/jobs/llm"
	"github.com/reme-dev/reme/store"
	"github.com/reme-dev/reme/vision"
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
	Images       ImagesConfig   `yaml:"images" json:"images"`
	Watch        WatchConfig    `yaml:"watch" json:"watch"`
	Redact       RedactConfig   `yaml:"redact" json:"redact"`
	Maintain     MaintainConfig `yaml:"maintain" json:"maintain"`
	Journal      JournalConfig  `yaml:"journal" json:"journal"`
	Memory       LongTermConfig `yaml:"memory" json:"memory"`

	file    string            // the config.yaml read, or ""
	sources map[string]string // key path -> where its value came from
	// loc is Timezone loaded by validate: loading reads the zone database
	// each time, and commands ask for it often.
	loc     *time.Location
	locName string
}

// LongTermConfig configures long-term memory: entries, the profile,
// MEMORY.md and reme context.
type LongTermConfig struct {
	// Extract runs the long-term pass after auto_memory (default on).
	Extract bool `yaml:"extract" json:"extract"`
	// ProfileAuto lets that pass update memory/profile.md (default off).
	ProfileAuto bool `yaml:"profile_auto" json:"profile_auto"`
	// MaxEntryBytes bounds an entry's content.
	MaxEntryBytes int `yaml:"max_entry_bytes" json:"max_entry_bytes"`
	// IndexMaxLines and IndexMaxBytes bound MEMORY.md.
	IndexMaxLines int `yaml:"index_max_lines" json:"index_max_lines"`
	IndexMaxBytes int `yaml:"index_max_bytes" json:"index_max_bytes"`
	// VerifyAfterDays: older entries come with a reminder to verify them.
	VerifyAfterDays int `yaml:"verify_after_days" json:"verify_after_days"`
	// ContextBudget is reme context's default byte budget.
	ContextBudget int `yaml:"context_budget" json:"context_budget"`
	// ContextEntries is how many relevant entries reme context shows at most.
	ContextEntries int `yaml:"context_entries" json:"context_entries"`
	// PickTimeout bounds the model call that picks entries for reme context.
	PickTimeout Duration `yaml:"pick_timeout" json:"pick_timeout"`
}

// RedactConfig says where secrets are masked (see store.RedactSecrets).
type RedactConfig struct {
	// Sessions masks secrets in session files too (session/dialog/ and the
	// transcript copies); by default they keep the conversation's raw text.
	Sessions bool `yaml:"sessions" json:"sessions"`
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
	IncludeImages bool `yaml:"include_images" json:"include_images"`
	// MaxPixels and MaxImageMemory are the earlier names of
	// images.max_pixels and images.max_memory, still read from config.yaml
	// (foldImageKeys), never printed.
	MaxPixels      int64 `yaml:"max_pixels,omitempty" json:"-"`
	MaxImageMemory int64 `yaml:"max_image_memory,omitempty" json:"-"`
}

// ImagesConfig bounds every image reme prepares for a model: image
// resources (auto_resource) and images in conversations (auto_memory).
type ImagesConfig struct {
	// MaxPixels: larger images are refused before decoding.
	MaxPixels int64 `yaml:"max_pixels" json:"max_pixels"`
	// MaxMemory bounds the memory of decoding one image, judged from its
	// header (size, bit depth, colour model) before decoding.
	MaxMemory int64 `yaml:"max_memory" json:"max_memory"`
}

// Vision is the limits as vision.Prepare takes them.
func (c ImagesConfig) Vision() vision.Options {
	return vision.Options{MaxPixels: c.MaxPixels, MaxDecodeBytes: c.MaxMemory}
}

// imageKeyAliases are the earlier names of the images.* keys.
var imageKeyAliases = []struct{ old, key string }{
	{"resource.max_pixels", "images.max_pixels"},
	{"resource.max_image_memory", "images.max_memory"},
}

// foldImageKeys moves values given under the earlier names into images.*,
// refusing a file that sets both names of one limit.
func (c *Config) foldImageKeys() error {
	for _, a := range imageKeyAliases {
		if _, set := c.sources[a.old]; !set {
			continue
		}
		if _, both := c.sources[a.key]; both {
			return fmt.Errorf("%s and %s are the same limit (%s is its earlier name); set only %s", a.old, a.key, a.old, a.key)
		}
		c.sources[a.key] = "config.yaml (as " + a.old + ")"
		delete(c.sources, a.old)
	}
	if c.Resource.MaxPixels != 0 {
		c.Images.MaxPixels, c.Resource.MaxPixels = c.Resource.MaxPixels, 0
	}
	if c.Resource.MaxImageMemory != 0 {
		c.Images.MaxMemory, c.Resource.MaxImageMemory = c.Resource.MaxImageMemory, 0
	}
	return nil
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
		Resource: ResourceConfig{IncludeImages: true},
		Images:   ImagesConfig{MaxPixels: vision.DefaultMaxPixels, MaxMemory: vision.DefaultMaxDecodeBytes},
		Watch:    WatchConfig{Debounce: Duration(300 * time.Millisecond), Reconcile: Duration(5 * time.Minute)},
		Maintain: MaintainConfig{MaxChanges: 20, MaxPercent: 10, DueGraceDays: 7, NearDuplicateThreshold: jobs.DefaultNearDupThreshold},
		Journal:  JournalConfig{KeepDays: 90},
		Memory: LongTermConfig{Extract: true, MaxEntryBytes: jobs.DefaultMaxEntryBytes,
			IndexMaxLines: store.DefaultMemoryIndexLines, IndexMaxBytes: store.DefaultMemoryIndexBytes,
			VerifyAfterDays: jobs.DefaultVerifyAfterDays, ContextBudget: jobs.DefaultContextBudget,
			ContextEntries: jobs.DefaultContextEntries, PickTimeout: Duration(10 * time.Second)},
	}
}

// envOverrides maps environment variables onto configuration fields; key
// names the field for `reme config` ("from REME_…").
var envOverrides = []struct {
	name, key string
	set       func(c *Config, v string) error
}{
	{"REME_TIMEZONE", "timezone", func(c *Config, v string) error { c.Timezone = v; return nil }},
	{"REME_LANGUAGE", "language", func(c *Config, v string) error { c.Language = v; return nil }},
	{"REME_MAX_FILE_BYTES", "max_file_bytes", func(c *Config, v string) error { return parseInt64(v, &c.MaxFileBytes) }},
	{"REME_SEARCH_LIMIT", "search.limit", func(c *Config, v string) error { return parseInt(v, &c.Search.Limit) }},
	{"REME_MODEL", "llm.model", func(c *Config, v string) error { c.LLM.Model = v; return nil }},
	{"REME_VISION_MODEL", "llm.vision_model", func(c *Config, v string) error { c.LLM.VisionModel = v; return nil }},
	{"REME_LLM_BASE_URL", "llm.base_url", func(c *Config, v string) error { c.LLM.BaseURL = v; return nil }},
	{"REME_LLM_TIMEOUT", "llm.timeout", func(c *Config, v string) error {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 90s or 2m", v)
		}
		c.LLM.Timeout = Duration(d)
		return nil
	}},
	{"REME_LLM_MAX_RETRIES", "llm.max_retries", func(c *Config, v string) error { return parseInt(v, &c.LLM.MaxRetries) }},
	{"REME_LLM_PROVIDER", "llm.provider", func(c *Config, v string) error { c.LLM.Provider = v; return nil }},
	{"REME_EMBED_MODEL", "llm.embed_model", func(c *Config, v string) error { c.LLM.EmbedModel = v; return nil }},
	{"REME_RERANK_MODEL", "llm.rerank_model", func(c *Config, v string) error { c.LLM.RerankModel = v; return nil }},
	{"REME_MEMORY_EXTRACT", "memory.extract", func(c *Config, v string) error { return parseBool(v, &c.Memory.Extract) }},
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

func parseBool(s string, dst *bool) error {
	v, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not true or false", s)
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
// It remembers where each value came from, for `reme config`.
func loadConfig(workspace string, getenv func(string) string) (*Config, error) {
	cfg := defaultConfig()
	cfg.sources = map[string]string{}
	p := filepath.Join(workspace, "config.yaml")
	raw, err := os.ReadFile(p)
	switch {
	case err == nil:
		cfg.file = p
		if err := decodeConfigYAML(raw, cfg, cfg.sources); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if err := cfg.foldImageKeys(); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
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
			cfg.sources[e.key] = e.name
		}
	}
	if err := cfg.validate(); err != nil {
		if cfg.file != "" {
			return nil, fmt.Errorf("configuration (%s and REME_* variables): %w", cfg.file, err)
		}
		return nil, fmt.Errorf("configuration: %w", err)
	}
	resolveModel(&cfg.LLM, fromFile, getenv)
	return cfg, nil
}

// decodeConfigYAML reads config.yaml into cfg. yaml.v3's own errors name Go
// types ("cannot unmarshal !!str into int64", "field x not found in type
// main.Config"), so the document is walked here and every mistake is told
// in the file's terms: line, key path, what was expected.
func decodeConfigYAML(raw []byte, cfg *Config, sources map[string]string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // an empty file
	}
	return decodeYAMLValue(doc.Content[0], reflect.ValueOf(cfg).Elem(), "", sources)
}

var durationType = reflect.TypeOf(Duration(0))

func decodeYAMLValue(n *yaml.Node, v reflect.Value, key string, sources map[string]string) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // "key:" with no value keeps the default
	}
	where := fmt.Sprintf("line %d: %s", n.Line, key)
	if v.Kind() == reflect.Struct {
		if n.Kind != yaml.MappingNode {
			if key == "" {
				return fmt.Errorf("line %d: the file must be a mapping of keys such as \"timezone: UTC\", not %s", n.Line, yamlKindName(n))
			}
			return fmt.Errorf("%s must be a mapping of keys, not %s", where, yamlKindName(n))
		}
		fields := map[string]reflect.Value{}
		var names []string
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			fields[name] = v.Field(i)
			names = append(names, name)
		}
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			path := k.Value
			if key != "" {
				path = key + "." + k.Value
			}
			if line, dup := seen[k.Value]; dup {
				return fmt.Errorf("line %d: %s is set twice (first on line %d)", k.Line, path, line)
			}
			seen[k.Value] = k.Line
			f, ok := fields[k.Value]
			if !ok {
				return fmt.Errorf("line %d: unknown key %s (known here: %s)", k.Line, path, strings.Join(names, ", "))
			}
			if err := decodeYAMLValue(val, f, path, sources); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("%s must be a single value, not %s", where, yamlKindName(n))
	}
	switch {
	case v.Type() == durationType:
		d, err := time.ParseDuration(n.Value)
		if err != nil {
			return fmt.Errorf("%s: %q is not a duration such as 90s or 2m", where, n.Value)
		}
		v.SetInt(int64(d))
	case v.Kind() == reflect.String:
		v.SetString(n.Value)
	case v.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(n.Value)
		if err != nil {
			return fmt.Errorf("%s must be true or false, not %q", where, n.Value)
		}
		v.SetBool(b)
	case v.CanInt():
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%s must be a whole number, not %q", where, n.Value)
		}
		v.SetInt(i)
	case v.CanFloat():
		f, err := strconv.ParseFloat(n.Value, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%s must be a number, not %q", where, n.Value)
		}
		v.SetFloat(f)
	default:
		// Lists and maps: let yaml.v3 decode, and word its error without
		// Go type names.
		if err := n.Decode(v.Addr().Interface()); err != nil {
			return fmt.Errorf("%s has the wrong form (%s)", where, yamlTypeWords().ReplaceAllString(err.Error(), ""))
		}
	}
	sources[key] = "config.yaml"
	return nil
}

var yamlTypeWords = store.LazyRegexp(`yaml: |unmarshal errors:\n\s*| into [\w.\[\]*]+|!!`)

func yamlKindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return fmt.Sprintf("the value %q", n.Value)
	}
}

func (c *Config) validate() error {
	loc, err := c.Location()
	if err != nil {
		return err
	}
	c.loc, c.locName = loc, c.Timezone
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
	if c.Images.MaxPixels < 1 {
		return fmt.Errorf("images.max_pixels must be at least 1")
	}
	if c.Images.MaxMemory < 1<<20 {
		return fmt.Errorf("images.max_memory must be at least 1048576 (1 MiB), in bytes")
	}
	if c.Watch.Debounce <= 0 || c.Watch.Reconcile <= 0 {
		return fmt.Errorf("watch.debounce and watch.reconcile must be positive durations")
	}
	m := c.Memory
	if m.MaxEntryBytes < 1 || m.IndexMaxLines < 1 || m.IndexMaxBytes < 1 || m.ContextEntries < 1 {
		return fmt.Errorf("memory.max_entry_bytes, memory.index_max_lines, memory.index_max_bytes and memory.context_entries must be at least 1")
	}
	if m.VerifyAfterDays < 0 {
		return fmt.Errorf("memory.verify_after_days must not be negative")
	}
	if m.ContextBudget < jobs.MinContextBudget {
		return fmt.Errorf("memory.context_budget must be at least %d bytes", jobs.MinContextBudget)
	}
	if m.PickTimeout <= 0 {
		return fmt.Errorf("memory.pick_timeout must be a positive duration")
	}
	if err := c.Maintain.validate(); err != nil {
		return err
	}
	if c.Journal.KeepDays < 1 {
		return fmt.Errorf("journal.keep_days must be at least 1")
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
	if c.loc != nil && c.locName == c.Timezone {
		return c.loc, nil
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

// effective is the configuration as `reme config` shows it: redacted, with
// what an empty value means filled in (the resolved time zone, the default
// language; the model and API address are resolved on loading) and notes
// saying, per key path, where a value came from.
func (c *Config) effective(getenv func(string) string) (*Config, map[string]string) {
	r := c.redacted()
	notes := map[string]string{}
	for k, src := range c.sources {
		notes[k] = "from " + src
	}
	if r.Timezone == "" {
		r.Timezone = localZoneName(getenv)
		notes["timezone"] = "the host's local time"
	}
	if loc, err := c.Location(); err == nil {
		_, off := time.Now().In(loc).Zone()
		notes["timezone"] = joinNote(notes["timezone"], "now UTC"+formatOffset(off))
	}
	if r.Language == "" {
		r.Language = "en"
		notes["language"] = "default"
	}
	defaults := map[string][2]string{ // key -> value in effect, the provider's default
		"llm.model":        {r.LLM.Model, llm.DefaultModel},
		"llm.vision_model": {r.LLM.VisionModel, llm.DefaultVisionModel},
		"llm.base_url":     {r.LLM.BaseURL, llm.DefaultCohereURL},
	}
	if r.LLM.Provider == providerOpenAI {
		defaults = map[string][2]string{"llm.model": {r.LLM.Model, llm.DefaultOpenAIModel}, "llm.base_url": {r.LLM.BaseURL, llm.DefaultOpenAIURL}}
	}
	for k, v := range defaults {
		if _, set := c.sources[k]; !set && r.LLM.Provider != "" && v[0] == v[1] {
			notes[k] = "default for " + r.LLM.Provider
		}
	}
	if r.LLM.BaseURL != c.LLM.BaseURL {
		notes["llm.base_url"] = joinNote(notes["llm.base_url"], "credentials hidden")
	}
	return r, notes
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func formatOffset(sec int) string {
	sign := "+"
	if sec < 0 {
		sign, sec = "-", -sec
	}
	return fmt.Sprintf("%s%02d:%02d", sign, sec/3600, sec/60%60)
}

// localZoneName is the IANA name of the host's time zone where it can be
// found ($TZ, /etc/localtime, /etc/timezone), else "Local".
func localZoneName(getenv func(string) string) string {
	if tz := strings.TrimPrefix(getenv("TZ"), ":"); tz != "" {
		if i := strings.Index(tz, "zoneinfo/"); i >= 0 {
			return tz[i+len("zoneinfo/"):]
		}
		if !strings.HasPrefix(tz, "/") {
			return tz
		}
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if i := strings.Index(target, "zoneinfo/"); i >= 0 {
			return target[i+len("zoneinfo/"):]
		}
	}
	if b, err := os.ReadFile("/etc/timezone"); err == nil {
		if name := strings.TrimSpace(string(b)); name != "" {
			return name
		}
	}
	return "Local"
}

type configCmd struct{}

func (configCmd) Help() string {
	return `Prints the effective configuration: defaults, then <workspace>/config.yaml, then
REME_* environment variables (and a .env file in the working folder or one of
its parents, for variables the environment does not set). The "# model:" line
says which provider and model are in use and why; comments say where a value
came from and what an empty value means (the host's time zone, the default
model). Secrets are shown only as "(set)", credentials in URLs as ***.`
}

func (configCmd) Run(ctx context.Context, app *App) error {
	cfg, err := app.Config()
	if err != nil {
		return err
	}
	eff, notes := cfg.effective(app.Getenv)
	if app.Globals.JSON {
		return app.printJSON(struct {
			Workspace  string `json:"workspace"`
			ConfigFile string `json:"config_file"`
			EnvFile    string `json:"env_file"`
			*Config
			Notes map[string]string `json:"notes"`
		}{app.root, cfg.file, app.dotEnv.path, eff, notes})
	}
	key := "(none)"
	if eff.LLM.APIKey != "" {
		key = "(set, from " + eff.LLM.APIKeyFrom + ")"
	}
	var doc yaml.Node
	if err := doc.Encode(struct {
		Config `yaml:",inline"`
		APIKey string `yaml:"api_key"`
	}{*eff, key}); err != nil {
		return err
	}
	annotateYAML(&doc, "", notes)
	b, err := yaml.Marshal(&doc)
	if err != nil {
		return err
	}
	fmt.Fprintf(app.Stdout, "# workspace: %s\n", app.root)
	if cfg.file != "" {
		fmt.Fprintf(app.Stdout, "# config file: %s\n", cfg.file)
	} else {
		fmt.Fprintf(app.Stdout, "# config file: none (%s would be read)\n", filepath.Join(app.root, "config.yaml"))
	}
	if app.dotEnv.path != "" {
		fmt.Fprintf(app.Stdout, "# .env file: %s\n", app.dotEnv.path)
	}
	fmt.Fprintf(app.Stdout, "# model: %s\n", eff.LLM.describe())
	_, err = app.Stdout.Write(b)
	return err
}

// annotateYAML puts each note as a line comment on its key.
func annotateYAML(n *yaml.Node, prefix string, notes map[string]string) {
	if n.Kind == yaml.DocumentNode {
		for _, c := range n.Content {
			annotateYAML(c, prefix, notes)
		}
		return
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		path := prefix + k.Value
		if note, ok := notes[path]; ok && v.Kind == yaml.ScalarNode {
			v.LineComment = note
		}
		annotateYAML(v, path+".", notes)
	}
}

// options are the jobs' view of the memory settings.
func (m LongTermConfig) options() jobs.MemoryOptions {
	return jobs.MemoryOptions{
		Extract: m.Extract, ProfileAuto: m.ProfileAuto, MaxEntryBytes: m.MaxEntryBytes,
		IndexBounds:     store.MemoryIndexBounds{MaxLines: m.IndexMaxLines, MaxBytes: m.IndexMaxBytes},
		VerifyAfterDays: m.VerifyAfterDays,
	}
}
