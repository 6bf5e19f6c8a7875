package ids

import (
	"testing"

	"github.com/google/uuid"
)

func TestUUIDv7IsVersion7AndStrictlyIncreasing(t *testing.T) {
	var g UUIDv7
	prev := g.NewID()
	for i := 0; i < 100000; i++ {
		id := g.NewID()
		if id <= prev {
			t.Fatalf("id %d (%s) does not sort after %s", i, id, prev)
		}
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 7 {
			t.Fatalf("%s is not a UUIDv7 (err %v)", id, err)
		}
		prev = id
	}
}
