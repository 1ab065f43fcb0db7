package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/reme-dev/reme/store"
)

// Settings files of other programs are JSON that people edit by hand: a
// merge must keep every key, in its order, and every value as written.
// jsonObject keeps the keys in order; numbers stay json.Number, so they
// are written back digit for digit.

type jsonObject struct {
	keys []string
	vals map[string]any // *jsonObject, []any, json.Number, string, bool or nil
}

func newJSONObject() *jsonObject { return &jsonObject{vals: map[string]any{}} }

func (o *jsonObject) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// set replaces a key's value in place, or adds the key at the end.
func (o *jsonObject) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// object returns the object under k, adding an empty one when k is
// missing; a value of another kind is an error that names the key.
func (o *jsonObject) object(k string) (*jsonObject, error) {
	v, ok := o.vals[k]
	if !ok || v == nil {
		obj := newJSONObject()
		o.set(k, obj)
		return obj, nil
	}
	obj, ok := v.(*jsonObject)
	if !ok {
		return nil, fmt.Errorf("%q is not an object", k)
	}
	return obj, nil
}

func (o *jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := store.MarshalNoEscape(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		vb, err := store.MarshalNoEscape(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// encodeJSONFile writes v indented by two spaces, with a final newline.
func encodeJSONFile(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// decodeJSONObject reads a whole JSON document that must be an object; an
// empty document is an empty object.
func decodeJSONObject(data []byte) (*jsonObject, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return newJSONObject(), nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeJSONValue(dec)
	if err != nil {
		return nil, jsonErrorAt(data, dec, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, jsonErrorAt(data, dec, errors.New("text after the JSON value"))
	}
	obj, ok := v.(*jsonObject)
	if !ok {
		return nil, errors.New("the file is not a JSON object")
	}
	return obj, nil
}

func decodeJSONValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := newJSONObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v is not a string", kt)
				}
				v, err := decodeJSONValue(dec)
				if err != nil {
					return nil, err
				}
				obj.set(k, v) // a repeated key keeps its first place and its last value, as JSON readers do
			}
			_, err := dec.Token() // }
			return obj, err
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeJSONValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token() // ]
			return arr, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}

// jsonErrorAt names the line of a syntax error.
func jsonErrorAt(data []byte, dec *json.Decoder, err error) error {
	off := dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	return fmt.Errorf("not valid JSON at line %d: %v", line, err)
}
