package ports

import "context"

// Backplane carries messages between the replicas sharing a store. A message
// published reaches every replica listening — the publisher too, which
// knows its own — in the order one publisher sent it, and every listener
// hears all messages in one same order (Postgres: the order their
// transactions committed); a replica that is not listening then (starting,
// or reconnecting) misses it.
type Backplane interface {
	// Publish queues payload to be sent, in order after every payload this
	// replica published before; it never waits. A send that fails is
	// retried; a payload the full queue cannot take is dropped and logged
	// (the listeners find the hole by the events' numbers and ask).
	Publish(payload []byte)
	// Listen calls deliver with every message, in order, until ctx ends;
	// it reconnects by itself after a failure. listening (nil: not told)
	// hears false when the listening connection is lost — what is sent
	// until it is back may never arrive — and true each time it listens.
	Listen(ctx context.Context, deliver func(payload []byte), listening func(up bool))
	// Close stops sending once what is queued is sent (or a short grace
	// has passed).
	Close()
}
