package browser

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"

	"github.com/chromedp/cdproto/target"
	"golang.org/x/sys/unix"
)

// Bounded DevTools messages.
//
// chromedp reads a local Chrome's pipe a whole message at a time, however
// long the message is, and decodes it. The pool puts a filter between
// them (interpose): Chrome writes to a pipe of the filter's, which passes
// each message of at most its bound on to chromedp's pipe as it is, and
// reads a longer one through to its end keeping only its first and last
// bytes, never the whole. A response becomes an error response of the
// same id, so that its command fails at once naming the limit; an event is
// dropped. Either way the pool is told (Pool.oversized), which fails the
// render of the tab. Commands from chromedp to Chrome are copied as they
// are.

// DefaultMaxMessage is the bound on one DevTools message from Chrome when
// Options.MaxMessage is 0. It passes the largest screenshot one image may
// be (actions.MaxImagePixels, at most about 4 bytes a pixel as PNG: 64 MB,
// 85 MB in base64) and any page HTML the rest of the server would take.
const DefaultMaxMessage = 96 << 20

// ErrMessageTooLarge is matched by the error of a render whose page made
// Chrome send the server a DevTools message over the bound (a page
// thousands of megabytes long, a huge request body or dialog text).
var ErrMessageTooLarge = errors.New("browser: devtools message over the limit")

// Sizes of what the filter keeps of a message over the bound: the head
// holds its id or method, the tail its session.
const (
	msgHeadLen   = 512
	msgTailLen   = 256
	pipeBufSize  = 64 << 10
	msgRetainCap = 4 << 20 // a message buffer larger than this is not kept for the next
)

// msgFilter bounds the messages from one Chrome (its pipe, or the
// WebSocket to a remote one).
type msgFilter struct {
	max    int64
	onDrop func(oversized)
	// err is interpose's failure; read after the allocator returned.
	mu  sync.Mutex
	err error
}

// oversized is a message over the bound.
type oversized struct {
	sessionID target.SessionID // "" for the browser's own
	id        int64            // of a response; 0 for an event
	method    string           // of an event, when its head names it
	size      int64
	limit     int64
}

// what names the message in an error.
func (o oversized) what() string {
	switch {
	case o.id != 0:
		return "the answer to a command"
	case o.method != "":
		return "the event " + o.method
	}
	return "a message"
}

// Error is the render's reason.
func (o oversized) Error() string {
	return fmt.Sprintf("Chrome sent %s of %d bytes for the page, over the limit of %d bytes", o.what(), o.size, o.limit)
}

// Is makes an oversized match ErrMessageTooLarge.
func (o oversized) Is(target error) bool { return target == ErrMessageTooLarge }

func (f *msgFilter) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

// failed returns interpose's error, if any.
func (f *msgFilter) failed() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// interpose puts the filter between Chrome and chromedp in cmd, which
// chromedp has given the ends of its pipes as ExtraFiles (Chrome's fds 3,
// commands, and 4, answers and events): Chrome gets pipes of the filter's
// instead, and the filter keeps copies of chromedp's ends to write and
// read them. The filter's copies of Chrome's ends are closed once chromedp
// sends its first command, which it does after Chrome started, or when
// chromedp closes its pipe without starting it; after that, Chrome's end
// of a pipe is the only one, so that each side sees the other go.
func (f *msgFilter) interpose(cmd *exec.Cmd) {
	if len(cmd.ExtraFiles) != 2 {
		f.fail(fmt.Errorf("chromedp gave %d pipe files, want 2", len(cmd.ExtraFiles)))
		return
	}
	fromDP, err := dupFile(cmd.ExtraFiles[0], "commands")
	if err != nil {
		f.fail(err)
		return
	}
	toDP, err := dupFile(cmd.ExtraFiles[1], "answers")
	if err != nil {
		fromDP.Close()
		f.fail(err)
		return
	}
	chromeIn, toChrome, err := os.Pipe()
	if err != nil {
		fromDP.Close()
		toDP.Close()
		f.fail(err)
		return
	}
	fromChrome, chromeOut, err := os.Pipe()
	if err != nil {
		fromDP.Close()
		toDP.Close()
		chromeIn.Close()
		toChrome.Close()
		f.fail(err)
		return
	}
	cmd.ExtraFiles[0], cmd.ExtraFiles[1] = chromeIn, chromeOut
	var once sync.Once
	started := func() {
		once.Do(func() {
			chromeIn.Close()
			chromeOut.Close()
		})
	}
	go copyCommands(fromDP, toChrome, started)
	go f.answers(fromChrome, toDP)
}

// dupFile returns a new file of the same pipe end as f.
func dupFile(f *os.File, name string) (*os.File, error) {
	sc, err := f.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("pipe %s: %w", name, err)
	}
	var fd int
	var derr error
	if err := sc.Control(func(orig uintptr) { fd, derr = unix.FcntlInt(orig, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, fmt.Errorf("pipe %s: %w", name, err)
	}
	if derr != nil {
		return nil, fmt.Errorf("pipe %s: dup: %w", name, derr)
	}
	return os.NewFile(uintptr(fd), "devtools-"+name), nil
}

// copyCommands copies chromedp's commands to Chrome until chromedp
// closes its pipe; started is called at the first command and at the end.
// When Chrome is gone the commands are read and dropped.
func copyCommands(from, to *os.File, started func()) {
	defer from.Close()
	defer started()
	buf := make([]byte, pipeBufSize)
	broken := false
	for {
		n, err := from.Read(buf)
		if n > 0 {
			started()
			if !broken {
				if _, werr := to.Write(buf[:n]); werr != nil {
					broken = true
					to.Close()
				}
			}
		}
		if err != nil {
			break
		}
	}
	if !broken {
		to.Close()
	}
}

// answers passes Chrome's messages on to chromedp, bounded, until Chrome
// closes its pipe; then chromedp's is closed too.
func (f *msgFilter) answers(from, to *os.File) {
	defer from.Close()
	defer to.Close()
	br := bufio.NewReaderSize(from, pipeBufSize)
	a := assembler{max: f.max}
	broken := false
	for {
		chunk, err := br.ReadSlice(0)
		end := err == nil
		if end {
			chunk = chunk[:len(chunk)-1]
		}
		a.add(chunk)
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return // io.EOF or a read error: Chrome is gone
		}
		if !end {
			continue
		}
		var out []byte
		if a.over {
			if o := f.report(&a); o.id != 0 {
				out = append(errorResponse(o), 0)
			}
		} else {
			out = append(a.msg, 0)
		}
		if out != nil && !broken {
			if _, werr := to.Write(out); werr != nil {
				// chromedp left: read Chrome's pipe to its end so
				// that Chrome is not held on a full pipe.
				broken = true
			}
		}
		a.reset()
	}
}

// assembler puts one message together from its pieces: whole up to max
// bytes, past it only its head and tail.
type assembler struct {
	max             int64
	msg, head, tail []byte
	size            int64
	over            bool
}

// add appends the next piece of the message.
func (a *assembler) add(chunk []byte) {
	a.size += int64(len(chunk))
	switch {
	case a.over:
		a.tail = keepTail(a.tail, chunk)
	case a.size > a.max:
		a.over = true
		whole := append(a.msg, chunk...)
		a.head = append(a.head[:0], whole[:min(len(whole), msgHeadLen)]...)
		a.tail = keepTail(a.tail[:0], whole)
		a.msg = whole[:0]
	default:
		a.msg = append(a.msg, chunk...)
	}
}

// reset readies the assembler for the next message.
func (a *assembler) reset() {
	a.msg, a.size, a.over = a.msg[:0], 0, false
	if cap(a.msg) > msgRetainCap {
		a.msg = nil
	}
}

// report tells the pool of the message over the bound that a holds.
func (f *msgFilter) report(a *assembler) oversized {
	id, method := messageHead(a.head)
	o := oversized{sessionID: messageSession(a.tail), id: id, method: method, size: a.size, limit: f.max}
	if f.onDrop != nil {
		f.onDrop(o)
	}
	return o
}

// errorResponse is the error response that replaces a response over the
// bound.
func errorResponse(o oversized) []byte {
	text, _ := json.Marshal("firegate: " + o.Error()) // a string always marshals
	out := fmt.Appendf(nil, `{"id":%d,"error":{"code":-32000,"message":%s}`, o.id, text)
	if o.sessionID != "" {
		out = fmt.Appendf(out, `,"sessionId":"%s"`, o.sessionID)
	}
	return append(out, '}')
}

// keepTail appends chunk to tail and keeps the last msgTailLen bytes.
func keepTail(tail, chunk []byte) []byte {
	if len(chunk) >= msgTailLen {
		return append(tail[:0], chunk[len(chunk)-msgTailLen:]...)
	}
	tail = append(tail, chunk...)
	if len(tail) > msgTailLen {
		n := copy(tail, tail[len(tail)-msgTailLen:])
		tail = tail[:n]
	}
	return tail
}

// messageHead reads the id of a response or the method of an event from
// the start of a message: Chrome writes either first ({"id":N,... or
// {"method":"...",...). Zero and "" when the head is not of that shape.
func messageHead(head []byte) (id int64, method string) {
	s, ok := cutPrefix(head, "{")
	if !ok {
		return 0, ""
	}
	if rest, ok := cutKey(s, "id"); ok {
		end := 0
		for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
			end++
		}
		n, err := strconv.ParseInt(string(rest[:end]), 10, 64)
		if err != nil || n <= 0 {
			return 0, ""
		}
		return n, ""
	}
	if rest, ok := cutKey(s, "method"); ok {
		rest, ok = cutPrefix(rest, `"`)
		if !ok {
			return 0, ""
		}
		end := bytes.IndexByte(rest, '"')
		if end < 0 || end > 100 || !plainName(rest[:end]) {
			return 0, ""
		}
		return 0, string(rest[:end])
	}
	return 0, ""
}

// messageSession reads the session of a message from its end: Chrome
// writes it last (...,"sessionId":"ID"}), at the top level, where nothing
// closes after it; a nested one would be followed by more braces.
func messageSession(tail []byte) target.SessionID {
	s := bytes.TrimRight(tail, " \t\r\n")
	s, ok := bytes.CutSuffix(s, []byte(`"}`))
	if !ok {
		return ""
	}
	const key = `,"sessionId":"`
	i := bytes.LastIndex(s, []byte(key))
	if i < 0 || !plainName(s[i+len(key):]) {
		return ""
	}
	return target.SessionID(s[i+len(key):])
}

// plainName reports whether b is a non-empty run of letters, digits and
// dots (a method or a session id).
func plainName(b []byte) bool {
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return len(b) > 0
}

// cutPrefix cuts prefix from b after leading white space.
func cutPrefix(b []byte, prefix string) ([]byte, bool) {
	return bytes.CutPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte(prefix))
}

// cutKey cuts `"key":` (white space allowed) from the start of b.
func cutKey(b []byte, key string) ([]byte, bool) {
	rest, ok := cutPrefix(b, `"`+key+`"`)
	if !ok {
		return nil, false
	}
	rest, ok = cutPrefix(rest, ":")
	if !ok {
		return nil, false
	}
	return bytes.TrimLeft(rest, " \t\r\n"), true
}
