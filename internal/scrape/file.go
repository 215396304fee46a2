package scrape

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/firegate/firegate/internal/docconv"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/fetch"
)

// ErrUnsupportedFileType is an uploaded file of a type that cannot be
// converted.
var ErrUnsupportedFileType = errcode.New("scrape: unsupported file type", errcode.Invalid, "UNSUPPORTED_FILE_TYPE", "")

// File is an uploaded document.
type File struct {
	Name        string
	ContentType string
	Data        []byte
}

// ParseFile turns an uploaded document into a Document with the same
// formats pipeline as a scrape: PDFs go to the PDF parser, DOCX, CSV and
// text through HTML, markdown files as they are.
func (e *Engine) ParseFile(ctx context.Context, opts Options, f File) (doc *Document, err error) {
	defer e.recoverPanic(ctx, opts.URL, &doc, &err)
	if err := checkSupported(&opts, false, false, e.llm != nil); err != nil {
		return nil, err
	}
	var plan *llmPlan
	if e.llm != nil {
		if plan, opts, err = planLLM(&opts); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	doc, err = e.parseFile(ctx, &opts, f)
	if err != nil || plan == nil {
		return doc, err
	}
	if err := e.runLLM(ctx, plan, doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// parseFile converts the file (ParseFile without the model formats).
func (e *Engine) parseFile(ctx context.Context, opts *Options, f File) (*Document, error) {
	kind := docconv.Detect(f.Data, f.Name, f.ContentType)
	doc := &Document{Metadata: Metadata{
		SourceURL:   f.Name,
		URL:         f.Name,
		StatusCode:  http.StatusOK,
		ContentType: mimeOf(kind, f.ContentType),
		ScrapeID:    newID(),
		CreditsUsed: 1,
	}}
	switch kind {
	case docconv.KindPDF:
		if len(opts.Parsers) == 0 {
			s := base64.StdEncoding.EncodeToString(f.Data)
			doc.Markdown = &s
			return doc, nil // the bytes, nothing to redact
		}
		if err := e.renderPDF(ctx, opts, f.Data, doc); err != nil {
			return nil, err
		}
	case docconv.KindMarkdown:
		text := docconv.Text(f.Data)
		if opts.HasFormat(FormatMarkdown) {
			doc.Markdown = &text
		}
		if opts.HasFormat(FormatRawHTML) {
			doc.RawHTML = &text
		}
	case docconv.KindUnsupported:
		return nil, unsupportedType(f)
	default:
		h, err := docconv.ToHTML(ctx, f.Data, f.Name, f.ContentType)
		if errors.Is(err, docconv.ErrUnsupportedType) {
			return nil, unsupportedType(f)
		}
		if errors.Is(err, docconv.ErrTooLarge) {
			return nil, &errcode.Failure{Kind: ErrFileTooLarge, Cause: err,
				Msg: "The file expands beyond this server's limits (" + strings.TrimPrefix(err.Error(), docconv.ErrTooLarge.Error()+": ") + ") and was not converted."}
		}
		if errors.Is(err, docconv.ErrCorrupt) {
			return nil, &errcode.Failure{Kind: ErrUnsupportedFile, Cause: err,
				Msg: "The file is corrupt and could not be read (" + strings.TrimPrefix(err.Error(), docconv.ErrCorrupt.Error()+": ") + ")."}
		}
		if err != nil {
			return nil, &errcode.Failure{Kind: ErrUnsupportedFile, Msg: "The file could not be read: " + rootCause(err), Cause: err}
		}
		// An upload has no address: no page URL, so relative links and
		// images stay relative (a <base href> of the document still counts).
		resp := &fetch.Response{StatusCode: http.StatusOK,
			Header: http.Header{}, ContentType: "text/html", Body: []byte(h)}
		if err := e.renderHTML(opts, resp, doc, false); err != nil {
			return nil, err
		}
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%w: parsing the file", ErrTimeout)
	}
	if opts.RedactPII != nil {
		redactDocument(opts.RedactPII, doc)
	}
	return doc, nil
}

// unsupportedType is the error for a file of a type parse cannot convert,
// worded for the API user.
func unsupportedType(f File) error {
	return &errcode.Failure{Kind: ErrUnsupportedFileType,
		Msg: "Unsupported file type: " + describe(f) + ". Upload a PDF, DOCX, HTML, CSV, markdown or plain-text file."}
}

func describe(f File) string {
	if f.Name != "" {
		return f.Name
	}
	return f.ContentType
}

func mimeOf(k docconv.Kind, declared string) string {
	switch k {
	case docconv.KindPDF:
		return "application/pdf"
	case docconv.KindDOCX:
		return "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	case docconv.KindHTML:
		return "text/html"
	case docconv.KindCSV:
		return "text/csv"
	case docconv.KindMarkdown:
		return "text/markdown"
	case docconv.KindText:
		return "text/plain"
	}
	return declared
}
