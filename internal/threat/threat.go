// Package threat decides whether a host may be visited on a request's
// behalf: the operator's blocklist file (THREAT_BLOCKLIST_FILE, hosts-file
// or one-domain-per-line, reloaded when it changes) and a request's
// threatProtection override (blacklist and whitelist of bare hosts or
// "*.host" globs, blocked top-level domains). It has no reputation
// service: a listed host scores 100, any other 0.
//
// Matching is on the lower-cased, IDNA (punycode) form of the host without
// a trailing dot. A bare host in a request's list matches that host only;
// "*.host" matches every subdomain of host, not host itself. An entry of
// the blocklist file is a domain: it matches the domain and every
// subdomain. A blocked TLD ("zip", ".zip", "co.uk") matches every host
// ending in it. The whitelist wins over every block.
package threat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/idna"
)

// ErrBlocked is wrapped by every refusal.
var ErrBlocked = errors.New("threat: unsafe domain blocked")

// ErrEnforced: the request asked for mode off while the operator's
// blocklist is enforced.
var ErrEnforced = errors.New("threat: protection is enforced")

// BlockedError is one refusal: the host and why.
type BlockedError struct {
	Host   string
	Reason string // "blocklist", "blacklist", "tld", "unavailable"
	Entry  string // the matching entry
}

func (e *BlockedError) Error() string {
	switch e.Reason {
	case "blocklist":
		return fmt.Sprintf("%s is on this server's threat blocklist (%s)", e.Host, e.Entry)
	case "blacklist":
		return fmt.Sprintf("%s matches %q of threatProtection.blacklist", e.Host, e.Entry)
	case "tld":
		return fmt.Sprintf("%s is in the top-level domain %q of threatProtection.blockedTlds", e.Host, e.Entry)
	default:
		return fmt.Sprintf("%s could not be checked: the threat blocklist is unavailable and threatProtection.failurePolicy is closed", e.Host)
	}
}

// Unwrap returns ErrBlocked.
func (e *BlockedError) Unwrap() error { return ErrBlocked }

// Override is a request's threatProtection object.
type Override struct {
	Mode               string // "", "off", "normal"
	RiskScoreThreshold *int
	Blacklist          []string
	Whitelist          []string
	BlockedTLDs        []string
	FailurePolicy      string // "", "open", "closed"
}

// Active reports whether the override asks for a scan (anything but mode
// off); a nil override is inactive.
func (o *Override) Active() bool { return o != nil && o.Mode != "off" }

// Limits of the blocklist file.
const (
	// MaxFileBytes is the largest blocklist file read.
	MaxFileBytes = 64 << 20
	// maxLine is the longest line read; longer lines are skipped.
	maxLine = 4096
	// statEvery is how often the file is checked for a change.
	statEvery = time.Second
)

// Options configures a Checker.
type Options struct {
	// BlocklistFile is the operator's blocklist; "" for none.
	BlocklistFile string
	Log           *slog.Logger
	// Now is the clock (tests); nil = time.Now.
	Now func() time.Time
}

// Checker decides on hosts. It is safe for concurrent use; create one per
// process.
type Checker struct {
	path string
	log  *slog.Logger
	now  func() time.Time

	mu       sync.Mutex
	domains  map[string]bool // the file's domains
	modTime  time.Time
	size     int64
	checked  time.Time // last stat
	failing  bool      // the last reload failed (the previous list is kept)
	reloaded int       // loads done, for tests
}

// New returns a Checker. With a blocklist file it is read now: a missing,
// unreadable or oversized file is an error.
func New(opts Options) (*Checker, error) {
	c := &Checker{path: opts.BlocklistFile, log: opts.Log, now: opts.Now}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.path != "" {
		c.mu.Lock()
		defer c.mu.Unlock()
		if err := c.load(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Enforced reports whether the operator's blocklist applies to every
// request.
func (c *Checker) Enforced() bool { return c != nil && c.path != "" }

// Validate checks an override against the server's policy before any work:
// mode off while the blocklist is enforced is ErrEnforced.
func (c *Checker) Validate(o *Override) error {
	if o != nil && o.Mode == "off" && c.Enforced() {
		return fmt.Errorf("%w: threatProtection.mode off is not allowed: this server enforces its threat blocklist", ErrEnforced)
	}
	return nil
}

// Check decides on host (a URL's host name, any case, IDN or punycode) for
// a request with override o (nil: none). A refusal is a *BlockedError.
func (c *Checker) Check(host string, o *Override) error {
	h := Normalize(host)
	if h == "" {
		return nil
	}
	if o.Active() && matchList(h, o.Whitelist) != "" {
		return nil
	}
	if c != nil && c.path != "" {
		entry, failing := c.lookup(h)
		if entry != "" {
			return &BlockedError{Host: h, Reason: "blocklist", Entry: entry}
		}
		if failing && o.Active() && o.FailurePolicy == "closed" {
			return &BlockedError{Host: h, Reason: "unavailable"}
		}
	}
	if !o.Active() {
		return nil
	}
	if e := matchList(h, o.Blacklist); e != "" {
		return &BlockedError{Host: h, Reason: "blacklist", Entry: e}
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return nil // an address has no TLD
	}
	for _, t := range o.BlockedTLDs {
		tld := Normalize(strings.TrimPrefix(t, "."))
		if tld != "" && (h == tld || strings.HasSuffix(h, "."+tld)) {
			return &BlockedError{Host: h, Reason: "tld", Entry: t}
		}
	}
	return nil
}

// Normalize lower-cases host, strips a trailing dot and brackets, and
// turns an internationalised name into its punycode form.
func Normalize(host string) string {
	h := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), ".")
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if h == "" {
		return ""
	}
	if a, err := idna.Lookup.ToASCII(h); err == nil {
		return a
	}
	if a, err := idna.Punycode.ToASCII(h); err == nil {
		return a
	}
	return h
}

// matchList returns the entry of list (bare hosts, *.host globs) that
// matches h, or "".
func matchList(h string, list []string) string {
	for _, e := range list {
		if rest, ok := strings.CutPrefix(e, "*."); ok {
			if d := Normalize(rest); d != "" && strings.HasSuffix(h, "."+d) {
				return e
			}
			continue
		}
		if Normalize(e) == h {
			return e
		}
	}
	return ""
}

// lookup returns the file entry matching h ("" for none) and whether the
// last reload failed, reloading the file first when it changed.
func (c *Checker) lookup(h string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.maybeReload()
	for d := h; d != ""; {
		if c.domains[d] {
			return d, c.failing
		}
		_, rest, ok := strings.Cut(d, ".")
		if !ok {
			break
		}
		d = rest
	}
	return "", c.failing
}

// maybeReload stats the file at most every statEvery and reloads it when
// its size or modification time changed. A failed reload keeps the last
// list and marks the checker failing until a reload succeeds. c.mu is
// held.
func (c *Checker) maybeReload() {
	now := c.now()
	if now.Sub(c.checked) < statEvery {
		return
	}
	c.checked = now
	fi, err := os.Stat(c.path)
	if err != nil {
		if !c.failing {
			c.log.Warn("threat blocklist unavailable; keeping the last list", "file", c.path, "err", err)
		}
		c.failing = true
		return
	}
	if !c.failing && fi.ModTime().Equal(c.modTime) && fi.Size() == c.size {
		return
	}
	if err := c.load(); err != nil {
		if !c.failing {
			c.log.Warn("threat blocklist reload failed; keeping the last list", "file", c.path, "err", err)
		}
		c.failing = true
	}
}

// load reads the file. c.mu is held.
func (c *Checker) load() error {
	f, err := os.Open(c.path)
	if err != nil {
		return fmt.Errorf("threat: blocklist: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("threat: blocklist: %w", err)
	}
	if fi.Size() > MaxFileBytes {
		return fmt.Errorf("threat: blocklist %s: %d bytes, more than the %d allowed", c.path, fi.Size(), MaxFileBytes)
	}
	domains, err := Parse(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return fmt.Errorf("threat: blocklist %s: %w", c.path, err)
	}
	c.domains = domains
	c.modTime, c.size = fi.ModTime(), fi.Size()
	c.checked = c.now()
	c.failing = false
	c.reloaded++
	c.log.Info("threat blocklist loaded", "file", c.path, "domains", len(domains))
	return nil
}

// Parse reads a blocklist: hosts-file lines ("0.0.0.0 evil.example
// other.example", the address first) or one domain per line; "#" starts a
// comment; "*.domain" is the same as "domain". Names hosts files map to
// the machine itself ("localhost", "broadcasthost", ...) are skipped, as
// are entries that are no valid domain and lines longer than 4 KiB.
func Parse(r io.Reader) (map[string]bool, error) {
	out := map[string]bool{}
	br := bufio.NewReaderSize(r, maxLine)
	skipping := false
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			skipping = true
			continue
		}
		if skipping {
			skipping = false
		} else {
			parseLine(line, out)
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// parseLine adds the domains of one line to out.
func parseLine(line []byte, out map[string]bool) {
	if i := bytes.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		return
	}
	if _, err := netip.ParseAddr(fields[0]); err == nil && len(fields) > 1 {
		fields = fields[1:] // hosts-file: address then names
	}
	for _, f := range fields {
		d := Normalize(strings.TrimPrefix(f, "*."))
		if validDomain(d) && !localName[d] {
			out[d] = true
		}
	}
}

// localName lists the names hosts files map to themselves.
var localName = map[string]bool{
	"localhost": true, "localhost.localdomain": true, "local": true, "broadcasthost": true,
	"ip6-localhost": true, "ip6-loopback": true, "ip6-localnet": true, "ip6-mcastprefix": true,
	"ip6-allnodes": true, "ip6-allrouters": true, "ip6-allhosts": true, "0.0.0.0": true,
}

// validDomain reports whether d looks like a DNS name with a dot.
func validDomain(d string) bool {
	if len(d) > 253 || !strings.Contains(d, ".") {
		return false
	}
	if _, err := netip.ParseAddr(d); err == nil {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			b := label[i]
			if !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-' || b == '_') {
				return false
			}
		}
	}
	return true
}
