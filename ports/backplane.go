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
	// replica published before; it returns without waiting for the send
	// (it waits only while the queue is full).
	Publish(payload []byte)
	// Listen calls deliver with every message, in order, until ctx ends;
	// it reconnects by itself after a failure. Each time it has begun
	// listening (the first time and after each reconnect) it calls
	// deliver(nil) before any message: what was sent before may not have
	// reached this listener (the replicas' token caches start afresh).
	Listen(ctx context.Context, deliver func(payload []byte))
	// Close stops sending once what is queued is sent (or a short grace
	// has passed).
	Close()
}
