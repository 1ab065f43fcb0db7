package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// argSchema is the subset of JSON Schema that tool parameters use: type
// (one name or a list), properties, required, items, additionalProperties
// (a boolean or a schema) and enum. Other keywords are accepted and ignored,
// because the model sees them and the tool itself enforces the rest.
type argSchema struct {
	types      []string
	properties map[string]*argSchema
	required   []string
	items      *argSchema
	// extra is nil when undeclared properties are allowed without checks.
	extra   *argSchema
	noExtra bool
	enum    []any
}

// errNotJSON marks arguments that are not JSON at all, as opposed to JSON
// that misses the schema.
var errNotJSON = errors.New("arguments are not valid JSON")

var schemaTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// compileSchema parses a tool's parameter schema. Empty means "any object".
func compileSchema(raw json.RawMessage) (*argSchema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return &argSchema{types: []string{"object"}}, nil
	}
	var v any
	if err := decodeJSON(raw, &v); err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	return compileNode(v, "parameters")
}

func compileNode(v any, at string) (*argSchema, error) {
	if b, ok := v.(bool); ok {
		// true accepts anything; false accepts nothing, which for a property
		// schema only ever comes up as additionalProperties.
		if b {
			return &argSchema{}, nil
		}
		return nil, fmt.Errorf("%s: schema false is not supported here", at)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: schema is not an object", at)
	}
	s := &argSchema{}
	switch t := m["type"].(type) {
	case nil:
	case string:
		s.types = []string{t}
	case []any:
		for _, x := range t {
			name, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("%s: type list holds a non-string", at)
			}
			s.types = append(s.types, name)
		}
	default:
		return nil, fmt.Errorf("%s: type is not a string or list", at)
	}
	for _, t := range s.types {
		if !slices.Contains(schemaTypes, t) {
			return nil, fmt.Errorf("%s: unknown type %q", at, t)
		}
	}
	if p, ok := m["properties"]; ok {
		pm, ok := p.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: properties is not an object", at)
		}
		s.properties = make(map[string]*argSchema, len(pm))
		for name, sub := range pm {
			cs, err := compileNode(sub, at+"."+name)
			if err != nil {
				return nil, err
			}
			s.properties[name] = cs
		}
	}
	if r, ok := m["required"]; ok {
		list, ok := r.([]any)
		if !ok {
			return nil, fmt.Errorf("%s: required is not a list", at)
		}
		for _, x := range list {
			name, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("%s: required holds a non-string", at)
			}
			s.required = append(s.required, name)
		}
	}
	if it, ok := m["items"]; ok {
		cs, err := compileNode(it, at+"[]")
		if err != nil {
			return nil, err
		}
		s.items = cs
	}
	switch ap := m["additionalProperties"].(type) {
	case nil:
	case bool:
		s.noExtra = !ap
	default:
		cs, err := compileNode(ap, at+".additionalProperties")
		if err != nil {
			return nil, err
		}
		s.extra = cs
	}
	if e, ok := m["enum"]; ok {
		list, ok := e.([]any)
		if !ok || len(list) == 0 {
			return nil, fmt.Errorf("%s: enum is not a non-empty list", at)
		}
		s.enum = list
	}
	return s, nil
}

// validateArgs checks tool-call arguments against the schema and returns one
// error listing every problem, worded for the model to correct its call.
func validateArgs(s *argSchema, raw json.RawMessage) error {
	var v any
	if err := decodeJSON(raw, &v); err != nil {
		return fmt.Errorf("%w: %w", errNotJSON, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("arguments must be a JSON object, got %s", jsonType(v))
	}
	var problems []string
	s.check(v, "", &problems)
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

func (s *argSchema) check(v any, path string, problems *[]string) {
	if len(s.types) > 0 && !slices.ContainsFunc(s.types, func(t string) bool { return hasType(v, t) }) {
		*problems = append(*problems, fmt.Sprintf("%s: want %s, got %s", describe(path), strings.Join(s.types, " or "), jsonType(v)))
		return
	}
	if s.enum != nil && !slices.ContainsFunc(s.enum, func(e any) bool { return reflect.DeepEqual(e, v) }) {
		allowed := make([]string, len(s.enum))
		for i, e := range s.enum {
			b, _ := json.Marshal(e)
			allowed[i] = string(b)
		}
		*problems = append(*problems, fmt.Sprintf("%s: must be one of %s", describe(path), strings.Join(allowed, ", ")))
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for _, name := range s.required {
			if _, ok := x[name]; !ok {
				*problems = append(*problems, fmt.Sprintf("missing required %s", describe(join(path, name))))
			}
		}
		names := make([]string, 0, len(x))
		for name := range x {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if sub, ok := s.properties[name]; ok {
				sub.check(x[name], join(path, name), problems)
				continue
			}
			switch {
			case s.noExtra:
				*problems = append(*problems, fmt.Sprintf("unknown %s (allowed: %s)", describe(join(path, name)), s.allowed()))
			case s.extra != nil:
				s.extra.check(x[name], join(path, name), problems)
			}
		}
	case []any:
		if s.items != nil {
			for i, item := range x {
				s.items.check(item, path+"["+strconv.Itoa(i)+"]", problems)
			}
		}
	}
}

func (s *argSchema) allowed() string {
	if len(s.properties) == 0 {
		return "none"
	}
	names := make([]string, 0, len(s.properties))
	for name := range s.properties {
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func describe(path string) string {
	if path == "" {
		return "arguments"
	}
	return fmt.Sprintf("argument %q", path)
}

func hasType(v any, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		// Only plain digit literals, because the tools decode into Go ints,
		// which reject 1.0 and 1e3.
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		s := strings.TrimPrefix(n.String(), "-")
		return s != "" && strings.Trim(s, "0123456789") == ""
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "null":
		return v == nil
	}
	return false
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number:
		if hasType(x, "integer") {
			return "integer"
		}
		return "number"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// decodeJSON decodes exactly one JSON value, keeping numbers exact.
func decodeJSON(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("empty input")
		}
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}
