package scrape

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/pdfparse"
)

// ocrSecondsPerPage is a conservative OCR cost, used to refuse up front a
// PDF that cannot be recognised within the timeout.
const ocrSecondsPerPage = 4

// renderPDF converts a PDF with the first pdf parser's options.
func (e *Engine) renderPDF(ctx context.Context, opts *Options, data []byte, doc *Document) error {
	p := opts.Parsers[0]
	total, _ := pdfparse.PageCount(data)
	if p.Mode == pdfparse.ModeOCR && total > 0 {
		pages := total
		if p.MaxPages > 0 {
			pages = min(pages, p.MaxPages)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < time.Duration(pages*ocrSecondsPerPage)*time.Second {
			return insufficientTime(pages, nil)
		}
	}
	res, err := pdfparse.Parse(ctx, data, pdfparse.Options{Mode: p.Mode, MaxPages: p.MaxPages, Blocks: p.Blocks, PageMarkers: p.PageMarkers})
	switch {
	case err == nil:
	case errors.Is(err, pdfparse.ErrTooLarge):
		return &errcode.Failure{Kind: ErrPDFTooLarge, Cause: err,
			Msg: "The PDF expands beyond this server's limits (" + strings.TrimPrefix(err.Error(), pdfparse.ErrTooLarge.Error()+": ") + ") and was not parsed."}
	case errors.Is(err, context.DeadlineExceeded):
		return insufficientTime(total, err)
	case errors.Is(err, pdfparse.ErrOCRUnavailable):
		return unsupported(ErrOCRNotAvailable, "parsers.mode",
			"OCR needs pdftoppm and tesseract, which are not installed on this server; use mode fast or auto")
	case errors.Is(err, pdfparse.ErrEncrypted):
		return &errcode.Failure{Kind: ErrUnsupportedFile, Msg: "The PDF is encrypted and cannot be read.", Cause: err}
	case errors.Is(err, pdfparse.ErrCorrupt):
		return &errcode.Failure{Kind: ErrUnsupportedFile, Msg: "The PDF is corrupt or truncated and cannot be read.", Cause: err}
	default:
		return fmt.Errorf("scrape: pdf: %w", err)
	}
	doc.Markdown = &res.Markdown
	if p.Pages {
		doc.Pages = res.Pages
		if doc.Pages == nil {
			doc.Pages = []pdfparse.Page{}
		}
	}
	if p.Blocks {
		doc.Blocks = res.Blocks
		if doc.Blocks == nil {
			doc.Blocks = []pdfparse.PageBlocks{}
		}
	}
	numPages := res.NumPages
	doc.Metadata.NumPages = &numPages
	if res.TotalPages > 0 {
		tp := res.TotalPages
		doc.Metadata.TotalPages = &tp
	}
	if doc.Metadata.Page == nil {
		doc.Metadata.Page = map[string]any{}
	}
	if res.Title != "" {
		doc.Metadata.Page["title"] = res.Title
	}
	if res.Author != "" {
		doc.Metadata.Page["author"] = res.Author
	}
	if len(res.Warnings) > 0 {
		w := strings.Join(res.Warnings, " ")
		doc.Warning = &w
	}
	doc.Metadata.CreditsUsed = int(billing.ScrapeCost(billing.ScrapeCostInput{PDFPages: res.NumPages}))
	return nil
}

func insufficientTime(pages int, cause error) error {
	msg := "The PDF needs more time than the timeout allows; raise timeout or lower parsers maxPages."
	if pages > 0 {
		msg = fmt.Sprintf("The PDF has %d pages, which need more time than the timeout allows; raise timeout or lower parsers maxPages.", pages)
	}
	return &errcode.Failure{Kind: ErrPDFInsufficientTime, Msg: msg, Cause: cause}
}
