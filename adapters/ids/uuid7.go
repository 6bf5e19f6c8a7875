// Package ids mints row ids for ports.IDs.
package ids

import "github.com/google/uuid"

// UUIDv7 mints UUIDv7 strings. google/uuid keeps them strictly increasing
// within the process (a counter fills the sub-millisecond bits), which the
// wire contract's paging on "the smallest id" relies on.
type UUIDv7 struct{}

// NewID returns a fresh UUIDv7 string.
func (UUIDv7) NewID() string { return uuid.Must(uuid.NewV7()).String() }
