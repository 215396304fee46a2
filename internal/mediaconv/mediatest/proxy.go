package mediatest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// ProxiedHeader marks a request a ForwardProxy forwarded.
const ProxiedHeader = "X-Test-Proxied"

// ForwardProxy is an HTTP proxy for plain-HTTP requests in absolute form
// that forwards them with ProxiedHeader set, and counts them.
func ForwardProxy(tb testing.TB) (*httptest.Server, *atomic.Int64) {
	tb.Helper()
	var proxied atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !r.URL.IsAbs() {
			http.Error(w, "not a proxy request", http.StatusBadRequest)
			return
		}
		proxied.Add(1)
		out, err := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out.Header = r.Header.Clone()
		out.Header.Del("Proxy-Authorization")
		out.Header.Set(ProxiedHeader, "1")
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	tb.Cleanup(proxy.Close)
	return proxy, &proxied
}

// OnlyProxied makes srv refuse (403) requests that did not come through a
// ForwardProxy.
func OnlyProxied(srv *httptest.Server) { RequireHeader(srv, ProxiedHeader) }

// RequireHeader makes srv refuse (403) requests whose header is not "1":
// those that did not come the way a test sends them.
func RequireHeader(srv *httptest.Server, header string) {
	inner := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(header) != "1" {
			http.Error(w, "refused: no "+header+" header", http.StatusForbidden)
			return
		}
		inner.ServeHTTP(w, r)
	})
}
