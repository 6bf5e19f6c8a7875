package docker

import (
	"context"
	"errors"
	"fmt"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/agents-server/agents-server/core/errs"
)

// fail translates a daemon or transport error into the wire codes: not found
// stays not_found, a caller's cancellation is returned as is, everything
// else — unreachable daemon, refused request — is upstream, with the daemon's
// own words (minus any credential) so an operator can act on it.
func (d *daemon) fail(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	var coded *errs.Error
	if errors.As(err, &coded) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	what := fmt.Sprintf(format, args...)
	switch {
	case cerrdefs.IsNotFound(err):
		return errs.Wrap(errs.NotFound, err, "%s: %s", what, d.scrub(daemonMessage(err)))
	case errors.Is(err, context.DeadlineExceeded):
		return errs.Wrap(errs.Upstream, err, "%s: the docker daemon at %s did not answer in time", what, d.display)
	case client.IsErrConnectionFailed(err) || !isAPIError(err):
		// What we were doing does not matter to whoever must fix the
		// connection; why it failed does, unless it is the client's generic
		// "Cannot connect", which says nothing more than we do.
		detail := d.scrub(err.Error())
		if strings.HasPrefix(detail, "Cannot connect to the Docker daemon") {
			return errs.Wrap(errs.Upstream, err, "cannot reach the docker daemon at %s: is it running?", d.display)
		}
		return errs.Wrap(errs.Upstream, err, "cannot reach the docker daemon at %s: %s", d.display, detail)
	default:
		return errs.Wrap(errs.Upstream, err, "%s: docker daemon at %s: %s", what, d.display, d.scrub(daemonMessage(err)))
	}
}

// isAPIError reports whether err is an answer of the daemon (an HTTP error
// response, typed by the client), as opposed to a failure to talk to it.
func isAPIError(err error) bool {
	return strings.Contains(err.Error(), daemonPrefix) ||
		cerrdefs.IsNotFound(err) || cerrdefs.IsConflict(err) || cerrdefs.IsInvalidArgument(err)
}

const daemonPrefix = "Error response from daemon: "

// daemonMessage is the daemon's own text: what follows the client's last
// "Error response from daemon: ", which some calls repeat after a preamble.
func daemonMessage(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, daemonPrefix); i >= 0 {
		return s[i+len(daemonPrefix):]
	}
	return s
}

// scrub removes the target's SSH secrets from text bound for a client.
func (d *daemon) scrub(s string) string {
	for _, secret := range d.secrets {
		s = strings.ReplaceAll(s, secret, "********")
	}
	return s
}
