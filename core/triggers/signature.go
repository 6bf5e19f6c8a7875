package triggers

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// The headers a webhook delivery proves itself with.
const (
	TimestampHeader = "X-Timestamp"
	SignatureHeader = "X-Signature-256"
)

// Sign is a delivery's signature: hex HMAC-SHA256 of the timestamp, a dot
// and the body, under the trigger's secret.
func Sign(secret, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks a delivery: a timestamp in UNIX seconds within
// domain.HookWindow of now, and a signature (hex, a "sha256=" prefix
// allowed) that matches, compared in constant time. Returns unauthorized
// saying which part failed, never what the signature should have been.
func Verify(secret, timestamp, signature string, body []byte, now time.Time) error {
	ts, err := strconv.ParseInt(strings.TrimSpace(timestamp), 10, 64)
	if err != nil {
		return errs.E(errs.Unauthorized, "%s must be the delivery's time in UNIX seconds", TimestampHeader)
	}
	if d := now.Sub(time.Unix(ts, 0)); d > domain.HookWindow || d < -domain.HookWindow {
		return errs.E(errs.Unauthorized, "%s is more than %d minutes from the server's clock", TimestampHeader,
			int(domain.HookWindow/time.Minute))
	}
	sig := strings.TrimSpace(signature)
	if len(sig) >= 7 && strings.EqualFold(sig[:7], "sha256=") {
		sig = sig[7:]
	}
	got, err := hex.DecodeString(sig)
	if err != nil || len(got) != sha256.Size {
		return errs.E(errs.Unauthorized, "%s must be the hex HMAC-SHA256 of timestamp + \".\" + body", SignatureHeader)
	}
	want, _ := hex.DecodeString(Sign(secret, strings.TrimSpace(timestamp), body))
	if secret == "" || !hmac.Equal(got, want) {
		return errs.E(errs.Unauthorized, "the signature does not match")
	}
	return nil
}
