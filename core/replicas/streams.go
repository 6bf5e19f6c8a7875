package replicas

import (
	"github.com/agents-server/agents-server/core/auth"
)

// A credential revoked, signed out, disabled, demoted or deleted on one
// replica stops working on all of them at once: the closing is relayed,
// each replica forgets its cached copy, closes the streams it holds and
// confirms, and the closing answers once the live replicas have confirmed
// (or their caches no longer answer: see the fence).

// kindClose is a credential's streams closing, to every replica.
const kindClose = "close"

// Forgetter drops cached credentials (the auth service).
type Forgetter interface {
	// Forget drops one token (tokenID set) or every token of userID.
	Forget(userID, tokenID string)
	// ForgetAll drops every cached token: closings may have been missed.
	ForgetAll()
}

// closer relays every closing to the other replicas after closing here.
type closer struct {
	link  *Link
	local auth.StreamCloser
}

// Streams returns the stream closer the auth service uses: local closes
// this replica's streams; every closing is relayed, and on the others
// their Deliveries' Credentials forget the cached credential before their
// Streams close. A closing returns once the other replicas confirmed, or
// at most CloseAckWithin after it was heard back (CloseHeardWithin if it
// never is).
func (l *Link) Streams(local auth.StreamCloser) auth.StreamCloser {
	return closer{link: l, local: local}
}

// CloseToken implements auth.StreamCloser.
func (c closer) CloseToken(userID, tokenID, reason string) int {
	wait := c.link.closeEverywhere(message{Kind: kindClose, Owner: userID, Token: tokenID, Reason: reason})
	n := c.local.CloseToken(userID, tokenID, reason)
	wait()
	return n
}

// CloseUser implements auth.StreamCloser.
func (c closer) CloseUser(userID, reason string) int {
	wait := c.link.closeEverywhere(message{Kind: kindClose, Owner: userID, Reason: reason})
	n := c.local.CloseUser(userID, reason)
	wait()
	return n
}

// closeHere files a closing another replica relayed.
func closeHere(to Deliveries, m message) {
	if to.Credentials != nil {
		to.Credentials.Forget(m.Owner, m.Token)
	}
	local := to.Streams
	if local == nil {
		return
	}
	if m.Token != "" {
		local.CloseToken(m.Owner, m.Token, m.Reason)
		return
	}
	local.CloseUser(m.Owner, m.Reason)
}
