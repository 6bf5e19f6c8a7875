package secrets

import (
	"context"
	"fmt"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// CanaryKey is the meta fact holding a value sealed under the database's key.
const CanaryKey = "secret_key_check"

const canaryText = "agents-server secret key check"

var canaryPlace = Place("settings", CanaryKey)

// CheckKey makes sure box holds the key this database was sealed with, so a
// missing or wrong key refuses to start with one message instead of failing
// the first read of a credential. The first start with a key seals the canary.
// Returns unavailable (do not start) naming the key ids involved.
func CheckKey(ctx context.Context, box *Box, meta ports.MetaStore) error {
	stored, ok, err := meta.GetMeta(ctx, CanaryKey)
	if err != nil {
		return err
	}
	if !ok {
		if !box.Sealing() {
			return nil
		}
		sealed, err := box.Seal(canaryPlace, canaryText)
		if err != nil {
			return err
		}
		// Another replica starting now may seal first, under its key:
		// the canary that stands is checked like any other.
		if stored, err = meta.InitMeta(ctx, CanaryKey, sealed); err != nil || stored == sealed {
			return err
		}
	}
	want, _ := SealedKeyID(stored)
	if !box.Sealing() {
		return errs.E(errs.Unavailable, "this database's secrets are sealed under key %s, but no secret key is set: "+
			"provide that key with AGENTS_SECRET_KEY or --secret-key-file", want)
	}
	plain, err := box.Open(canaryPlace, stored)
	if err != nil || plain != canaryText {
		return errs.E(errs.Unavailable, "the secret key given (id %s) is not the key this database was sealed with (id %s): "+
			"start with key %s; there is no rotation, a lost key means a fresh database", box.KeyID(), want, want)
	}
	return nil
}

// Describe says in one line how secrets are kept, for the start-up log.
func Describe(box *Box) string {
	if box.Sealing() {
		return fmt.Sprintf("secrets sealed with AES-256-GCM under key %s", box.KeyID())
	}
	return "no secret key set (AGENTS_SECRET_KEY or --secret-key-file): credentials are stored in plaintext"
}
