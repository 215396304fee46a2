// Package console serves the web console at /console: one embedded page
// whose script calls the public /v2 API (and the operator's /admin routes)
// with the key the user signs in with, so the console has no powers of its
// own.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// assets are the page, its script and its style sheet: plain files, no
// build step.
//
//go:embed assets
var assets embed.FS

// Options configures the console's handler.
type Options struct {
	// PublicURL is the server's PUBLIC_URL; when set, images (screenshots)
	// from its origin may be shown besides the page's own origin.
	PublicURL string
}

// Handler serves GET /console (the page) and /console/assets/* (its
// script and style sheet), every answer with a strict
// Content-Security-Policy: no inline script, no other origin but the
// server's own, no framing.
type Handler struct {
	files fs.FS
	etags map[string]string // by file name: a hash of its bytes
	csp   string
}

// New returns the console's handler.
func New(o Options) *Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic("console: embedded assets: " + err.Error()) // the embed directive guarantees the directory
	}
	img := "'self' data:"
	if u, err := url.Parse(o.PublicURL); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		img += " " + u.Scheme + "://" + u.Host
	}
	csp := "default-src 'none'; script-src 'self'; style-src 'self'; img-src " + img +
		"; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	etags := map[string]string{}
	entries, _ := fs.ReadDir(sub, ".")
	for _, e := range entries {
		if b, err := fs.ReadFile(sub, e.Name()); err == nil {
			sum := sha256.Sum256(b)
			etags[e.Name()] = `"` + hex.EncodeToString(sum[:8]) + `"`
		}
	}
	return &Handler{files: sub, etags: etags, csp: csp}
}

// CSP is the Content-Security-Policy of every console answer.
func (h *Handler) CSP() string { return h.csp }

// contentTypes are the types of the asset files by extension.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", h.csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := ""
	switch p := r.URL.Path; {
	case p == "/console" || p == "/console/":
		name = "index.html"
	case strings.HasPrefix(p, "/console/assets/"):
		name = strings.TrimPrefix(p, "/console/assets/")
		if name == "index.html" || name != path.Clean(name) || strings.Contains(name, "/") {
			name = ""
		}
	}
	b, err := fs.ReadFile(h.files, name)
	if name == "" || err != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	ct, ok := contentTypes[path.Ext(name)]
	if !ok {
		ct = "application/octet-stream"
	}
	hd.Set("Content-Type", ct)
	// The assets change with the binary: revalidate rather than cache.
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", h.etags[name])
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
}
