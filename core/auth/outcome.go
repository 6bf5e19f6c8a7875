package auth

import (
	"context"
	"errors"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// SignInMethod names how someone tried to sign in.
type SignInMethod string

// The sign-in methods.
const (
	MethodPassword SignInMethod = "password"
	MethodOIDC     SignInMethod = "oidc"
)

// signInOutcome is where EVERY sign-in ends, accepted or refused, whatever
// the method: the one place that logs who signed in how, and records why
// a sign-in was refused in the audit log (an accepted one is recorded
// with the token it mints: signedIn). It returns err unchanged. u is the account when
// one was identified (the zero user otherwise).
func (s *Service) signInOutcome(ctx context.Context, method SignInMethod, u domain.User, err error) error {
	if err == nil {
		s.log.InfoContext(ctx, "signed in", "method", method, "user_id", u.ID, "username", u.Username)
		return nil
	}
	attrs := []any{"method", method, "code", errs.CodeOf(err), "reason", errs.MessageOf(err)}
	if r := OIDCRefusalOf(err); r != "" {
		attrs = append(attrs, "refusal", r)
	}
	if u.ID != "" {
		attrs = append(attrs, "user_id", u.ID, "username", u.Username)
	}
	s.log.WarnContext(ctx, "sign-in refused", attrs...)
	s.refusedSignIn(ctx, method, u, err)
	return err
}

// refusalField carries an OIDCRefusal on the error that refuses a single
// sign-on.
const refusalField = "refusal"

// refuse is a single sign-on refusal: forbidden, with its short reason.
func refuse(r domain.OIDCRefusal, format string, args ...any) *errs.Error {
	e := errs.E(errs.Forbidden, format, args...)
	e.Fields = map[string]string{refusalField: string(r)}
	return e
}

// OIDCRefusalOf is the short reason a single sign-on was refused ("" when
// err is not such a refusal).
func OIDCRefusalOf(err error) domain.OIDCRefusal {
	var e *errs.Error
	if errors.As(err, &e) {
		return domain.OIDCRefusal(e.Fields[refusalField])
	}
	return ""
}
