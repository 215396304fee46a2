package scrape

import (
	"context"
	"encoding/json"

	"github.com/firegate/firegate/internal/llm"
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

// extractProduct fills doc.Product; a page without a product (no title
// and no variants in the answer) leaves it null.
func (e *Engine) extractProduct(ctx context.Context, md string, doc *Document) error {
	schema, err := llm.CompileSchema(json.RawMessage(productSchema))
	if err != nil {
		return err
	}
	out, err := e.extractWith(ctx, "product", productTask+"\n\n"+dataRule, schema, md, doc)
	if err != nil {
		return err
	}
	var probe struct {
		Title    string            `json:"title"`
		Variants []json.RawMessage `json:"variants"`
	}
	if out == nil || json.Unmarshal(out, &probe) != nil || (probe.Title == "" && len(probe.Variants) == 0) {
		out = json.RawMessage("null")
	}
	doc.Product = &out
	return nil
}
