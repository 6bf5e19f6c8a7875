package secrets

// Mask is what every read returns in place of a stored secret.
const Mask = "********"

// Masked returns the read form of a secret: the mask when one is stored,
// empty when none is, so a client can tell "set" from "unset" and nothing
// more.
func Masked(plaintext string) string {
	if plaintext == "" {
		return ""
	}
	return Mask
}

// ResolveWrite applies the write rules of a secret field: the mask sent back
// keeps the stored value, "" clears it, anything else replaces it.
func ResolveWrite(incoming, stored string) string {
	if incoming == Mask {
		return stored
	}
	return incoming
}
