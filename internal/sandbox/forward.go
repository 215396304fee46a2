package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// dialTimeout bounds connecting a program's connection to the CDP
// dialer.
const dialTimeout = 15 * time.Second

// maxConns bounds the DevTools connections a run holds at once.
const maxConns = 16

// forwarder serves a run's socket: each connection the sandbox's init
// makes is joined to a connection of the run's Dialer, until the run
// ends.
type forwarder struct {
	ln     net.Listener
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
}

func listenForward(ctx context.Context, path string, dial Dialer, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("sandbox: listen on the run's socket: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &forwarder{ln: ln, cancel: cancel, conns: map[net.Conn]struct{}{}}
	slots := make(chan struct{}, maxConns)
	f.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case slots <- struct{}{}:
			default:
				_ = c.Close()
				continue
			}
			f.wg.Go(func() {
				defer func() { <-slots }()
				if !f.track(c) {
					return
				}
				defer f.untrack(c)
				dctx, dcancel := context.WithTimeout(ctx, dialTimeout)
				up, err := dial(dctx)
				dcancel()
				if err != nil {
					log.WarnContext(ctx, "sandbox: connect a program to its DevTools endpoint", "err", err)
					return
				}
				if !f.track(up) {
					_ = up.Close()
					return
				}
				defer f.untrack(up)
				splice(c, up)
			})
		}
	})
	return f.close, nil
}

// track records a connection to close with the run; false when the run
// has ended (the connection is closed).
func (f *forwarder) track(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conns == nil {
		_ = c.Close()
		return false
	}
	f.conns[c] = struct{}{}
	return true
}

func (f *forwarder) untrack(c net.Conn) {
	_ = c.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.conns, c)
}

// close stops the listener and every connection, and waits for them.
func (f *forwarder) close() {
	f.cancel()
	_ = f.ln.Close()
	f.mu.Lock()
	for c := range f.conns {
		_ = c.Close()
	}
	f.conns = nil
	f.mu.Unlock()
	f.wg.Wait()
}

// serveHandler serves h over HTTP on the run's socket until the run ends;
// the requests' context ends with the run, and so do hijacked
// connections (a WebSocket's) whose handler follows it.
func serveHandler(ctx context.Context, path string, h http.Handler, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("sandbox: listen on the run's socket: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	// Hijacked connections (WebSockets) are not closed by Close: they are
	// kept here and closed with the run.
	var mu sync.Mutex
	hijacked := map[net.Conn]struct{}{}
	stopped := false
	srv := &http.Server{Handler: h, ReadHeaderTimeout: dialTimeout, BaseContext: func(net.Listener) context.Context { return ctx },
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ConnState: func(c net.Conn, st http.ConnState) {
			if st != http.StateHijacked {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if stopped {
				_ = c.Close()
				return
			}
			hijacked[c] = struct{}{}
		}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(&limitListener{Listener: ln, slots: make(chan struct{}, maxConns)})
	}()
	return func() {
		cancel()
		_ = srv.Close()
		mu.Lock()
		stopped = true
		for c := range hijacked {
			_ = c.Close()
		}
		mu.Unlock()
		<-done
	}, nil
}

// limitListener refuses connections beyond its slots.
type limitListener struct {
	net.Listener
	slots chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &slotConn{Conn: c, free: func() { <-l.slots }}, nil
		default:
			_ = c.Close()
		}
	}
}

type slotConn struct {
	net.Conn
	once sync.Once
	free func()
}

func (c *slotConn) Close() error {
	c.once.Do(c.free)
	return c.Conn.Close()
}
