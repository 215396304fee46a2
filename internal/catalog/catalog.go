// Package catalog is the operator's tool catalog behind catalog calls of
// POST /v2/scrape: providers and their capabilities read from a JSON or
// YAML file (CATALOG_FILE, reloaded when it changes), the built-in
// "firecrawl" provider (find-tools over the catalog, and capabilities that
// run this server's own engine), input validation against each
// capability's JSON schema, calls to operator tools through the network
// policy, and the exactly-once bookkeeping of x-request-id keys.
package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// BuiltinProvider is the name of the provider of this server's own
// capabilities.
const BuiltinProvider = "firecrawl"

// Bounds of the catalog file.
const (
	MaxFileBytes       = 4 << 20
	maxNameLen         = 200
	defaultToolTimeout = 30 * time.Second
	maxToolTimeout     = 300 * time.Second
)

// Catalog is one loaded catalog: the operator's providers after the
// built-in one. It is immutable.
type Catalog struct {
	Providers []*Provider
}

// Provider is a named set of capabilities.
type Provider struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Categories  []string `json:"categories,omitempty"`
	// Capabilities in file order.
	Capabilities []*Capability `json:"capabilities"`
	// Builtin marks the firecrawl provider (no third-party terms needed).
	Builtin bool `json:"-"`
}

// Capability is one callable tool.
type Capability struct {
	Path        string            `json:"path"`
	Description string            `json:"description"`
	Method      string            `json:"method"`
	URL         string            `json:"url"`
	Headers     map[string]string `json:"headers"`
	InputSchema json.RawMessage   `json:"inputSchema"`
	Credits     int64             `json:"credits"`
	TimeoutMs   int64             `json:"timeoutMs"`
	Domains     []string          `json:"domains"`

	schema *jsonschema.Schema
	// run executes a built-in capability; nil for an operator tool.
	run BuiltinFunc
}

// Timeout is the capability's own bound on one call.
func (c *Capability) Timeout() time.Duration {
	if c.TimeoutMs <= 0 {
		return defaultToolTimeout
	}
	return time.Duration(c.TimeoutMs) * time.Millisecond
}

// file is the catalog file's shape.
type file struct {
	Providers []*Provider `json:"providers"`
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Parse reads a catalog document: YAML when name ends in .yaml or .yml,
// else JSON. ${VAR} in a capability's url and header values is replaced
// by the variable from lookup (os.LookupEnv in the server); an unset
// variable is an error. Every capability's inputSchema is compiled.
func Parse(name string, data []byte, lookup func(string) (string, bool)) (*Catalog, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("catalog: %s is larger than %d bytes", name, MaxFileBytes)
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml":
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("catalog: %s: %w", name, err)
		}
		j, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("catalog: %s: not representable as JSON: %w", name, err)
		}
		data = j
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("catalog: %s: %w", name, err)
	}
	seen := map[string]bool{BuiltinProvider: true}
	for i, p := range f.Providers {
		if p == nil {
			return nil, fmt.Errorf("catalog: %s: providers[%d] is empty", name, i)
		}
		if err := checkName(p.Name); err != nil {
			return nil, fmt.Errorf("catalog: %s: providers[%d].name: %w", name, i, err)
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("catalog: %s: provider %q is defined twice (or is the built-in %q)", name, p.Name, BuiltinProvider)
		}
		seen[p.Name] = true
		paths := map[string]bool{}
		for j, c := range p.Capabilities {
			where := fmt.Sprintf("%s: provider %q capabilities[%d]", name, p.Name, j)
			if c == nil {
				return nil, fmt.Errorf("catalog: %s is empty", where)
			}
			if err := checkCapability(c, lookup); err != nil {
				return nil, fmt.Errorf("catalog: %s: %w", where, err)
			}
			if paths[c.Path] {
				return nil, fmt.Errorf("catalog: %s: path %q is defined twice", where, c.Path)
			}
			paths[c.Path] = true
		}
	}
	return &Catalog{Providers: f.Providers}, nil
}

func checkName(s string) error {
	if s == "" || len([]rune(s)) > maxNameLen {
		return fmt.Errorf("must be 1 to %d characters", maxNameLen)
	}
	return nil
}

func checkCapability(c *Capability, lookup func(string) (string, bool)) error {
	if err := checkName(c.Path); err != nil {
		return fmt.Errorf("path: %w", err)
	}
	c.Method = strings.ToUpper(c.Method)
	if c.Method == "" {
		c.Method = "POST"
	}
	if c.Method != "GET" && c.Method != "POST" {
		return fmt.Errorf("method %q: only GET and POST", c.Method)
	}
	var err error
	if c.URL, err = expand(c.URL, lookup); err != nil {
		return fmt.Errorf("url: %w", err)
	}
	u, perr := url.Parse(c.URL)
	if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url %q: an absolute http(s) URL is needed", c.URL)
	}
	for k, v := range c.Headers {
		if c.Headers[k], err = expand(v, lookup); err != nil {
			return fmt.Errorf("headers.%s: %w", k, err)
		}
	}
	if c.Credits < 0 {
		return errors.New("credits must not be negative")
	}
	if c.TimeoutMs < 0 || time.Duration(c.TimeoutMs)*time.Millisecond > maxToolTimeout {
		return fmt.Errorf("timeoutMs must be 0 to %d", maxToolTimeout.Milliseconds())
	}
	for i, d := range c.Domains {
		d = strings.ToLower(strings.TrimSpace(d))
		if d == "" || strings.ContainsAny(d, "/: ") {
			return fmt.Errorf("domains[%d] %q: a bare host name or *.host is needed", i, c.Domains[i])
		}
		c.Domains[i] = d
	}
	return compileSchema(c)
}

// expand replaces ${VAR} references.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	var missing []string
	out := envRef.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		v, ok := lookup(name)
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("environment variable %s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}

// compileSchema compiles c.InputSchema (an open object when absent); no
// reference may load a file or a URL.
func compileSchema(c *Capability) error {
	raw := c.InputSchema
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage(`{"type":"object"}`)
		c.InputSchema = raw
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("inputSchema: %w", err)
	}
	comp := jsonschema.NewCompiler()
	comp.UseLoader(jsonschema.SchemeURLLoader{})
	const loc = "mem:///input.json"
	if err := comp.AddResource(loc, doc); err != nil {
		return fmt.Errorf("inputSchema: %w", err)
	}
	s, err := comp.Compile(loc)
	if err != nil {
		return fmt.Errorf("inputSchema: %s", strings.ReplaceAll(err.Error(), loc, "inputSchema"))
	}
	c.schema = s
	return nil
}

// Provider returns the named provider (the built-in one included) or nil.
func (c *Catalog) Provider(name string) *Provider {
	for _, p := range c.Providers {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Capability returns the provider's capability of that path or nil.
func (p *Provider) Capability(path string) *Capability {
	for _, c := range p.Capabilities {
		if c.Path == path {
			return c
		}
	}
	return nil
}

// MatchesHost reports whether one of the capability's domains matches
// host: the same name or a subdomain of it; "*.name" only subdomains.
func (c *Capability) MatchesHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	return slices.ContainsFunc(c.Domains, func(d string) bool {
		if rest, ok := strings.CutPrefix(d, "*."); ok {
			return strings.HasSuffix(host, "."+rest)
		}
		return host == d || strings.HasSuffix(host, "."+d)
	})
}

// readFile reads a catalog file, refusing one over MaxFileBytes.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(ioLimit(f, MaxFileBytes+1)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
