// Package webfetch reads documents from the web for imports, refusing the
// server's private network unless an admin allowed it.
package webfetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Fetcher is a ports.Fetcher over net/http. The address check runs on
// every connection the client dials — after DNS, and on each redirect — so
// a name that resolves to a private address is refused as the address
// itself would be.
type Fetcher struct {
	strict, open *http.Client
	userAgent    string
}

// New returns a Fetcher announcing itself with userAgent.
func New(userAgent string) *Fetcher {
	return &Fetcher{strict: client(false), open: client(true), userAgent: userAgent}
}

// errRefused marks a dial the address rule refused.
var errRefused = errors.New("refused address")

func client(allowPrivate bool) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip := net.ParseIP(host)
		if !allowPrivate && (ip == nil || Private(ip)) {
			return fmt.Errorf("%w %s", errRefused, host)
		}
		return nil
	}}
	tr := &http.Transport{DialContext: dialer.DialContext, ForceAttemptHTTP2: true, TLSHandshakeTimeout: 10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second, MaxIdleConnsPerHost: 4}
	return &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("a redirect to %s", req.URL.Scheme)
		}
		return nil
	}}
}

// Private reports whether ip is one an import may not reach unless an
// admin allows it: loopback, link-local, private (RFC 1918, fc00::/7),
// unspecified, or multicast.
func Private(ip net.IP) bool {
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified()
}

// Fetch implements ports.Fetcher.
func (f *Fetcher) Fetch(ctx context.Context, r ports.FetchRequest) (ports.FetchResponse, error) {
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ports.FetchResponse{}, errs.Field("url", "must be an http(s) URL")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		return ports.FetchResponse{}, errs.Field("url", "must be an http(s) URL")
	}
	req.Header.Set("User-Agent", f.userAgent)
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	c := f.strict
	if r.AllowPrivate {
		c = f.open
	}
	resp, err := c.Do(req)
	if err != nil {
		if errors.Is(err, errRefused) {
			return ports.FetchResponse{}, errs.Field("url", "%s reaches a private or loopback address, which imports may not "+
				"(an admin can allow it: skills_allow_private_addresses)", u.Host)
		}
		return ports.FetchResponse{}, errs.Wrap(errs.Upstream, err, "fetching %s failed: %s", r.URL, reason(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ports.FetchResponse{}, errs.E(errs.Upstream, "fetching %s answered %s", r.URL, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, r.MaxBytes+1))
	if err != nil {
		return ports.FetchResponse{}, errs.Wrap(errs.Upstream, err, "reading %s failed: %s", r.URL, reason(err))
	}
	if int64(len(body)) > r.MaxBytes {
		return ports.FetchResponse{Body: body[:r.MaxBytes], Truncated: true}, nil
	}
	return ports.FetchResponse{Body: body}, nil
}

// reason says in a few words why a request failed.
func reason(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "it timed out"
	default:
		var ue *url.Error
		if errors.As(err, &ue) {
			return ue.Err.Error()
		}
		return err.Error()
	}
}
