package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/scrape"
)

// Limits of POST /v2/parse.
const (
	MaxParseFileBytes    = 50 << 20
	maxParseOptionsBytes = 1 << 20
	parseBodyLimit       = MaxParseFileBytes + maxParseOptionsBytes + 64<<10
	defaultParseTimeout  = 30000
)

// FileParser converts uploaded documents; *scrape.Engine implements it.
type FileParser interface {
	ParseFile(ctx context.Context, opts scrape.Options, f scrape.File) (*scrape.Document, error)
}

// handleParse serves POST /v2/parse: a multipart upload with a `file`
// part and an optional `options` part holding JSON. The conversion holds
// one of the team's concurrency slots, like a scrape.
func (s *Server) handleParse(w http.ResponseWriter, r *http.Request) error {
	if s.parser == nil {
		return handleNotImplemented(w, r)
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "application/json" {
		return &Error{Status: http.StatusNotImplemented, Code: "NOT_IMPLEMENTED",
			Message: "Not Implemented: uploads by uploadRef are not available on this server; send the file as multipart/form-data"}
	}
	if mt != "multipart/form-data" {
		return badParse("Send the file as multipart/form-data with a `file` part and an optional `options` part.")
	}
	file, optsJSON, err := readParseUpload(r)
	if err != nil {
		return err
	}
	opts, err := decodeParseOptions(optsJSON)
	if err != nil {
		return err
	}
	ctx := r.Context()
	team := teamFrom(ctx)
	if err := applyTeamZDR(team, &opts.ZeroDataRetention); err != nil {
		return err
	}
	if err := s.rateLimited(ctx, team, limits.ClassScrape); err != nil {
		return err
	}
	if err := s.checkCredits(ctx, team, billing.MinParse); err != nil {
		return err
	}
	release, _, err := s.acquire(ctx, team, opts.Timeout)
	if err != nil {
		return err
	}
	defer release()
	doc, err := s.parser.ParseFile(ctx, opts, file)
	if err != nil {
		return err
	}
	s.charge(ctx, team, int64(doc.Metadata.CreditsUsed), "parse")
	data, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("httpapi: encode document: %w", err)
	}
	writeData(w, data)
	return nil
}

func badParse(msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: msg}
}

// readParseUpload reads the file and options parts, bounded in size.
func readParseUpload(r *http.Request) (scrape.File, []byte, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return scrape.File{}, nil, badParse("Malformed multipart body: " + err.Error())
	}
	var f scrape.File
	var opts []byte
	var haveFile bool
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return f, nil, fileTooLarge()
		}
		if errors.Is(err, errBodyTimeout) {
			return f, nil, errBodyTimeout
		}
		if err != nil {
			return f, nil, badParse("Malformed multipart body: " + err.Error())
		}
		switch part.FormName() {
		case "file":
			data, err := io.ReadAll(io.LimitReader(part, MaxParseFileBytes+1))
			if errors.As(err, &mbe) || len(data) > MaxParseFileBytes {
				return f, nil, fileTooLarge()
			}
			if errors.Is(err, errBodyTimeout) {
				return f, nil, errBodyTimeout
			}
			if err != nil {
				return f, nil, badParse("Could not read the file part: " + err.Error())
			}
			f = scrape.File{Name: part.FileName(), ContentType: part.Header.Get("Content-Type"), Data: data}
			haveFile = true
		case "options":
			data, err := io.ReadAll(io.LimitReader(part, maxParseOptionsBytes+1))
			if errors.Is(err, errBodyTimeout) {
				return f, nil, errBodyTimeout
			}
			if err != nil || len(data) > maxParseOptionsBytes {
				return f, nil, badParse("The options part must be JSON of at most 1 MB.")
			}
			opts = data
		default:
			_, _ = io.Copy(io.Discard, part)
		}
	}
	if !haveFile || len(f.Data) == 0 {
		return f, nil, badParse("Missing file: send the document in a multipart part named `file`.")
	}
	return f, opts, nil
}

func fileTooLarge() *Error {
	return badParse(fmt.Sprintf("The file is too large: at most %d MB.", MaxParseFileBytes>>20))
}

// parseRejected are scrape options parse does not take (reference §5.8).
func parseRejected(k string) bool {
	switch k {
	case "actions", "waitFor", "location", "mobile", "onlyCleanContent", "maxAge", "minAge", "storeInCache",
		"lockdown", "profile", "threatProtection", "fastMode", "domainTools":
		return true
	}
	return false
}

// decodeParseOptions validates the options part: scrape options less those
// that need a live page, with a 30 s default timeout.
func decodeParseOptions(raw []byte) (scrape.Options, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	fields, apiErr := readJSONObject(bytes.NewReader(raw))
	if apiErr != nil {
		apiErr.Code, apiErr.Message = "BAD_REQUEST", "The options part is not a JSON object."
		return scrape.Options{}, apiErr
	}
	var unsupported []FieldError
	for _, f := range fields {
		if parseRejected(f.key) {
			unsupported = append(unsupported, FieldError{Path: []any{f.key}, Message: f.key + " is not supported by parse", Code: "unsupported"})
		}
	}
	var v validator
	v.checkKeys(nil, fields, func(k string) bool { return isScrapeOptionKey(k) || k == "origin" || k == "integration" })
	opts := v.scrapeOptions(nil, fields)
	opts.Origin, opts.Integration = v.bookkeeping(nil, fields)
	if !present(fields, "timeout") {
		opts.Timeout = defaultParseTimeout * time.Millisecond
	}
	for i, f := range opts.Formats {
		switch f.Type {
		case scrape.FormatMarkdown, scrape.FormatSummary, scrape.FormatHTML, scrape.FormatRawHTML,
			scrape.FormatLinks, scrape.FormatImages, scrape.FormatJSON:
		case scrape.FormatRawBase64:
			v.addCustom([]any{"formats", i}, codeCustom, "rawBase64 is not supported by parse")
		default:
			unsupported = append(unsupported, FieldError{Path: []any{"formats", i}, Message: "the " + f.Type + " format is not supported by parse", Code: "unsupported"})
		}
	}
	if opts.Proxy != "auto" && opts.Proxy != "basic" {
		unsupported = append(unsupported, FieldError{Path: []any{"proxy"}, Message: "parse supports proxy basic or auto only", Code: "unsupported"})
	}
	if len(unsupported) > 0 {
		names := make([]string, len(unsupported))
		for i, u := range unsupported {
			names[i] = fmt.Sprint(u.Path...)
		}
		return scrape.Options{}, &Error{Status: http.StatusBadRequest, Code: "PARSE_UNSUPPORTED_OPTIONS",
			Message: "Options not supported by parse: " + strings.Join(names, ", "), Details: unsupported}
	}
	if err := v.err(); err != nil {
		return scrape.Options{}, err
	}
	opts.StoreInCache = false
	return opts, nil
}
