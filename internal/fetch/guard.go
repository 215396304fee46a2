package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/firegate/firegate/internal/netguard"
)

// guardedDial dials through the network policy; a refusal unwraps to
// ErrBlocked (and netguard.ErrBlocked).
func guardedDial(d *netguard.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil && errors.Is(err, netguard.ErrBlocked) {
			return nil, fmt.Errorf("%w: %w", ErrBlocked, err)
		}
		return c, err
	}
}
