package porttest

import (
	"fmt"
	"sync/atomic"
)

// IDs is a ports.IDs minting UUIDv7-shaped ids from a counter: strictly
// increasing within the fake, as the real source is, and easy to read in a
// failure message.
type IDs struct {
	n atomic.Uint64
}

// NewID returns the next id.
func (g *IDs) NewID() string {
	return fmt.Sprintf("00000000-0000-7000-8000-%012x", g.n.Add(1))
}
