package scrape

import (
	"context"
	"encoding/json"

	"github.com/firegate/firegate/internal/llm"
	"github.com/firegate/firegate/internal/product"
)

// productSchema is the product object of the contract: title, brand,
// category, url, description and variants with price, sale, availability
// and images.
const productSchema = `{"type":"object","properties":{
"title":{"type":"string"},"brand":{"type":"string"},"category":{"type":"string","description":"may be a breadcrumb path"},
"url":{"type":"string"},"description":{"type":"string"},
"variants":{"type":"array","items":{"type":"object","properties":{
 "id":{"type":"string"},"sku":{"type":"string"},"title":{"type":"string"},
 "values":{"type":"object","additionalProperties":{"type":"string"},"description":"option name to value, e.g. size: M"},
 "price":{"$ref":"#/$defs/price"},
 "sale":{"type":"object","properties":{"originalPrice":{"$ref":"#/$defs/price"}},"required":["originalPrice"]},
 "availability":{"type":"object","properties":{"inStock":{"type":"boolean"},"text":{"type":"string"}},"required":["inStock"]},
 "images":{"type":"array","items":{"type":"object","properties":{"url":{"type":"string"},"alt":{"type":"string"}},"required":["url"]}}},
 "required":["availability"]}}},
"$defs":{"price":{"type":"object","properties":{"amount":{"type":"number"},"currency":{"type":"string","description":"ISO 4217"},"formatted":{"type":"string"}},"required":["amount"]}}}`

const productTask = "Extract the product this web page offers, as JSON matching the schema: its title, brand, category, " +
	"canonical URL, description and every variant with its price (a number, plus the ISO 4217 currency and the price as " +
	"written), the original price when it is on sale, availability and images (absolute URLs). Use only what the page " +
	"says; leave out what it does not give. If the page offers no product, answer {}."

// extractProduct completes doc.Product, which the markup extraction
// (internal/product) has set: the model is asked only when that left the
// title or a variant's price empty, and its answer only fills fields
// still empty. A page without a product either way stays null.
func (e *Engine) extractProduct(ctx context.Context, md string, doc *Document) error {
	var have *product.Product
	if doc.Product != nil {
		if err := json.Unmarshal(*doc.Product, &have); err != nil {
			have = nil
		}
	}
	if product.Complete(have) {
		return nil
	}
	schema, err := llm.CompileSchema(json.RawMessage(productSchema))
	if err != nil {
		return err
	}
	out, err := e.extractWith(ctx, "product", productTask+"\n\n"+dataRule, schema, md, doc)
	if err != nil {
		return err
	}
	var got *product.Product
	if out != nil && json.Unmarshal(out, &got) == nil && got != nil && (got.Title != "" || len(got.Variants) > 0) {
		if have == nil {
			have = got
		} else {
			product.Fill(have, got)
		}
	}
	doc.Product = productJSON(have)
	return nil
}

// productJSON encodes the product format's value; nil is the JSON null.
func productJSON(p *product.Product) *json.RawMessage {
	b, err := json.Marshal(p)
	if err != nil {
		b = []byte("null")
	}
	raw := json.RawMessage(b)
	return &raw
}
