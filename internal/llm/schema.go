package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled JSON schema that answers are validated against.
type Schema struct {
	raw      json.RawMessage
	compiled *jsonschema.Schema
}

// schemaURL is the in-memory location the caller's schema is compiled at.
const schemaURL = "mem:///schema.json"

// CompileSchema compiles a JSON schema (draft 2020-12 unless it names
// another in $schema). References may point only inside the schema: no
// file or network is ever read. A schema that does not compile returns an
// error wrapping ErrBadSchema.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSchema, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{}) // no scheme loads: no files, no network
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSchema, err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrBadSchema, strings.ReplaceAll(err.Error(), schemaURL, "schema"))
	}
	return &Schema{raw: append(json.RawMessage(nil), raw...), compiled: s}, nil
}

// Raw is the schema's JSON text.
func (s *Schema) Raw() json.RawMessage { return s.raw }

// Validate checks a JSON document against the schema; the error lists
// what is wrong, phrased for the model's retry.
func (s *Schema) Validate(doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	if err := s.compiled.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New(describe(ve))
		}
		return err
	}
	return nil
}

// describe flattens a validation error tree into one line per failing
// location.
func describe(ve *jsonschema.ValidationError) string {
	p := message.NewPrinter(language.English)
	var lines []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			lines = append(lines, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(p)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(lines) > 20 {
		lines = append(lines[:20], fmt.Sprintf("(%d more)", len(lines)-20))
	}
	return "the JSON does not match the schema: " + strings.Join(lines, "; ")
}

// JSONFromText asks the model for a JSON value matching schema from
// instructions and input (passed as separate messages), validated and
// retried once like CompleteJSON. It is the shape small callers need
// (turning a sentence into options) without the message plumbing.
func (c *Client) JSONFromText(ctx context.Context, instructions, input string, schema json.RawMessage) (json.RawMessage, error) {
	s, err := CompileSchema(schema)
	if err != nil {
		return nil, err
	}
	resp, err := c.CompleteJSON(ctx, JSONRequest{Schema: s, SchemaName: "options", Request: Request{Purpose: "options",
		Messages: []Message{{Role: "system", Content: instructions}, {Role: "user", Content: input}}}})
	if err != nil {
		return nil, err
	}
	return resp.JSON, nil
}
