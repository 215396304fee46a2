package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// Dialer dials through a Policy: names are resolved by the policy's
// resolver, each address is checked, and only admitted addresses are
// dialled, by address, so nothing resolves the name a second time.
type Dialer struct {
	Policy *Policy
	// Timeout bounds one whole dial (lookup and every address tried);
	// zero means 30 s. The ctx's deadline applies too.
	Timeout time.Duration
	// KeepAlive is the TCP keep-alive period; zero means 30 s.
	KeepAlive time.Duration
}

// DialFunc is DialContext as a transport's DialContext whose refusals
// also wrap blocked, the calling package's own sentinel (so its callers
// test errors.Is(err, pkg.ErrBlocked) without knowing of netguard).
func (d *Dialer) DialFunc(blocked error) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, address)
		if err != nil && errors.Is(err, ErrBlocked) {
			return nil, fmt.Errorf("%w: %w", blocked, err)
		}
		return c, err
	}
}

// DialContext connects to address ("host:port") on network ("tcp",
// "tcp4", "tcp6"). A refused address fails with an error wrapping
// ErrBlocked; a failed lookup fails (closed) with the lookup's error.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("netguard: dial %s %s: only tcp is dialled", network, address)
	}
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("netguard: dial %s: %w", address, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("netguard: dial %s: bad port", address)
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addrs, err := d.Policy.Resolve(ctx, host, uint16(port))
	if err != nil {
		return nil, err
	}
	keepAlive := d.KeepAlive
	if keepAlive == 0 {
		keepAlive = 30 * time.Second
	}
	nd := net.Dialer{KeepAlive: keepAlive}
	var errs []error
	for i, a := range addrs {
		if network == "tcp4" && !a.Unmap().Is4() || network == "tcp6" && a.Is4() {
			continue
		}
		// Leave later addresses a share of the time left.
		actx := ctx
		if left := len(addrs) - i; left > 1 {
			if dl, ok := ctx.Deadline(); ok {
				var c context.CancelFunc
				actx, c = context.WithTimeout(ctx, time.Until(dl)/time.Duration(left))
				defer c()
			}
		}
		conn, err := nd.DialContext(actx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("netguard: dial %s: no %s address", address, network)
	}
	return nil, errors.Join(errs...)
}
