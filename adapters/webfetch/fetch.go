// Package webfetch reads documents from the web for imports, under the
// outbound policy of the person importing.
package webfetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/internal/egress"
	"github.com/agents-server/agents-server/ports"
)

// Fetcher is a ports.Fetcher over net/http. The request's outbound policy
// is checked on every address the client dials — after DNS, and on each
// redirect — so a name that resolves to a refused address is refused as
// the address itself would be.
type Fetcher struct {
	transports *egress.Transports
	userAgent  string
}

// New returns a Fetcher announcing itself with userAgent.
func New(userAgent string) *Fetcher {
	return &Fetcher{userAgent: userAgent, transports: egress.New(egress.Options{Tune: func(tr *http.Transport) {
		tr.ResponseHeaderTimeout = 30 * time.Second
		tr.MaxIdleConnsPerHost = 4
	}})}
}

func (f *Fetcher) client(p domain.OutboundPolicy) *http.Client {
	return &http.Client{Transport: f.transports.For(p), CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("a redirect to %s", req.URL.Scheme)
		}
		return nil
	}}
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
	resp, err := f.client(r.Outbound).Do(req)
	if err != nil {
		var refused *domain.OutboundRefusal
		if errors.As(err, &refused) {
			return ports.FetchResponse{}, errs.Field("url", "%s: %s", u.Host, refused.Error())
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

// reason says in a person's words why a request failed — what happened
// and what to check — rather than the resolver's or the dialer's text,
// which the wrapped error keeps for the log.
func reason(err error) string {
	var ne net.Error
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "it did not answer in time; try again later"
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Sprintf("no server goes by the name %s; check the address", dns.Name)
	case errors.As(err, &dns):
		return fmt.Sprintf("the name %s could not be looked up (this server's name service did not answer); try again later", dns.Name)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "nothing there took the connection; check the address and its port"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the connection was cut before an answer; try again"
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return "this server has no route to it; check the address and this server's network"
	case errors.As(err, &cert), errors.As(err, &unknownCA), errors.As(err, &hostname):
		return "its certificate is not one this server trusts"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		var op *net.OpError
		if !errors.As(ue.Err, &op) {
			return ue.Err.Error() // ours: a redirect refused
		}
	}
	return "the connection failed; check the address and this server's network"
}
