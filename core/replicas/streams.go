package replicas

import (
	"github.com/agents-server/agents-server/core/auth"
)

// A credential revoked, signed out, disabled, demoted or deleted on one
// replica stops working on all of them at once: the closing is relayed, and
// each replica forgets its cached copy and closes the streams it holds.

// kindClose is a credential's streams closing, to every replica.
const kindClose = "close"

// Forgetter drops cached credentials (the auth service).
type Forgetter interface {
	Forget(userID, tokenID string)
}

// closer relays every closing to the other replicas after closing here.
type closer struct {
	link  *Link
	local auth.StreamCloser
}

// Streams returns the stream closer the auth service uses: local closes
// this replica's streams; every closing is relayed, and on the others
// their Deliveries' Credentials forget the cached credential before their
// Streams close.
func (l *Link) Streams(local auth.StreamCloser) auth.StreamCloser {
	return closer{link: l, local: local}
}

// CloseToken implements auth.StreamCloser.
func (c closer) CloseToken(userID, tokenID, reason string) int {
	c.link.send(message{Kind: kindClose, Owner: userID, Token: tokenID, Reason: reason})
	return c.local.CloseToken(userID, tokenID, reason)
}

// CloseUser implements auth.StreamCloser.
func (c closer) CloseUser(userID, reason string) int {
	c.link.send(message{Kind: kindClose, Owner: userID, Reason: reason})
	return c.local.CloseUser(userID, reason)
}

// closeHere files a closing another replica relayed.
func closeHere(to Deliveries, m message) {
	local := to.Streams
	if local == nil {
		return
	}
	if to.Credentials != nil {
		to.Credentials.Forget(m.Owner, m.Token)
	}
	if m.Token != "" {
		local.CloseToken(m.Owner, m.Token, m.Reason)
		return
	}
	local.CloseUser(m.Owner, m.Reason)
}
