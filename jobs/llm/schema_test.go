package llm

import (
	"encoding/json"
	"testing"
)

func TestValidateArgs(t *testing.T) {
	const nested = `{"type":"object","properties":{
		"path":{"type":"string"},
		"limit":{"type":"integer"},
		"ratio":{"type":"number"},
		"force":{"type":"boolean"},
		"order":{"type":"string","enum":["asc","desc"]},
		"note":{"type":["string","null"]},
		"tags":{"type":"array","items":{"type":"string"}},
		"grid":{"type":"array","items":{"type":"array","items":{"type":"integer"}}},
		"meta":{"type":"object","properties":{"author":{"type":"string"}},"required":["author"],"additionalProperties":false},
		"labels":{"type":"object","additionalProperties":{"type":"integer"}}
	},"required":["path"],"additionalProperties":false}`
	tests := []struct {
		name   string
		schema string
		args   string
		want   string // "" means valid
	}{
		{"minimal", nested, `{"path":"a.md"}`, ""},
		{"everything", nested, `{"path":"a","limit":3,"ratio":0.5,"force":true,"order":"desc","note":null,
			"tags":["x","y"],"grid":[[1,2],[3]],"meta":{"author":"me"},"labels":{"a":1}}`, ""},
		{"integer accepted as number", nested, `{"path":"a","ratio":2}`, ""},
		{"negative integer", nested, `{"path":"a","limit":-2}`, ""},
		{"missing required", nested, `{}`, `missing required argument "path"`},
		{"null is not a string", nested, `{"path":null}`, `argument "path": want string, got null`},
		{"fraction is not an integer", nested, `{"path":"a","limit":1.5}`, `argument "limit": want integer, got number`},
		{"exponent is not an integer", nested, `{"path":"a","limit":1e3}`, `argument "limit": want integer, got number`},
		{"string is not a number", nested, `{"path":"a","ratio":"0.5"}`, `argument "ratio": want number, got string`},
		{"string is not a boolean", nested, `{"path":"a","force":"true"}`, `argument "force": want boolean, got string`},
		{"enum", nested, `{"path":"a","order":"up"}`, `argument "order": must be one of "asc", "desc"`},
		{"type list", nested, `{"path":"a","note":3}`, `argument "note": want string or null, got integer`},
		{"array item type", nested, `{"path":"a","tags":["x",{"y":1}]}`, `argument "tags[1]": want string, got object`},
		{"array of arrays", nested, `{"path":"a","grid":[[1],[2,"3"]]}`, `argument "grid[1][1]": want integer, got string`},
		{"array not object", nested, `{"path":"a","tags":"x"}`, `argument "tags": want array, got string`},
		{"nested required and extra", nested, `{"path":"a","meta":{"name":"me"}}`,
			`missing required argument "meta.author"; unknown argument "meta.name" (allowed: author)`},
		{"additionalProperties schema", nested, `{"path":"a","labels":{"a":1,"b":"two"}}`, `argument "labels.b": want integer, got string`},
		{"undeclared", nested, `{"path":"a","zzz":1,"aaa":2}`,
			`unknown argument "aaa" (allowed: force, grid, labels, limit, meta, note, order, path, ratio, tags); unknown argument "zzz" (allowed: force, grid, labels, limit, meta, note, order, path, ratio, tags)`},
		{"extra allowed by default", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{"b":1}`, ""},
		{"empty schema takes any object", ``, `{"anything":[1,2]}`, ""},
		{"empty schema still wants an object", ``, `"x"`, "arguments must be a JSON object, got string"},
		{"null arguments", nested, `null`, "arguments must be a JSON object, got null"},
		{"invalid JSON", nested, `{"path":`, "arguments are not valid JSON: unexpected EOF"},
		{"empty arguments", nested, ``, "arguments are not valid JSON: empty input"},
		{"trailing data", nested, `{"path":"a"} {"path":"b"}`, "arguments are not valid JSON: trailing data after the JSON value"},
		{"unknown keywords ignored", `{"type":"object","properties":{"d":{"type":"string","format":"date","minLength":10}}}`, `{"d":"x"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := compileSchema(json.RawMessage(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			err = validateArgs(s, json.RawMessage(tt.args))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("validateArgs(%s)\n got %q\nwant %q", tt.args, got, tt.want)
			}
		})
	}
}

func TestCompileSchemaErrors(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`[]`, "parameters: schema is not an object"},
		{`{"type":"strnig"}`, `parameters: unknown type "strnig"`},
		{`{"type":7}`, "parameters: type is not a string or list"},
		{`{"type":[1]}`, "parameters: type list holds a non-string"},
		{`{"properties":[]}`, "parameters: properties is not an object"},
		{`{"properties":{"a":{"type":"nope"}}}`, `parameters.a: unknown type "nope"`},
		{`{"required":"a"}`, "parameters: required is not a list"},
		{`{"required":[1]}`, "parameters: required holds a non-string"},
		{`{"properties":{"a":{"items":{"type":"x"}}}}`, `parameters.a[]: unknown type "x"`},
		{`{"enum":[]}`, "parameters: enum is not a non-empty list"},
		{`{"properties":{"a":false}}`, "parameters.a: schema false is not supported here"},
		{`{`, "parameters: unexpected EOF"},
	}
	for _, tt := range tests {
		_, err := compileSchema(json.RawMessage(tt.schema))
		if err == nil || err.Error() != tt.want {
			t.Errorf("compileSchema(%s) error = %v, want %q", tt.schema, err, tt.want)
		}
	}
}

func FuzzValidateArgs(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}},"required":["a"],"additionalProperties":false}`, `{"a":[1,2]}`)
	f.Add(`{"type":["string","null"],"enum":["x",null]}`, `{"b":null}`)
	f.Add(``, `[1, {"x": "y"}]`)
	f.Fuzz(func(t *testing.T, schema, args string) {
		s, err := compileSchema(json.RawMessage(schema))
		if err != nil {
			return
		}
		err = validateArgs(s, json.RawMessage(args))
		if err == nil && !json.Valid([]byte(args)) {
			t.Errorf("invalid JSON %q accepted", args)
		}
	})
}
