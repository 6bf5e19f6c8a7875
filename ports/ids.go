package ports

// IDs mints row ids: UUIDv7 strings, monotonic within the process, because
// the wire contract pages on them ("smallest id" is "oldest").
type IDs interface {
	NewID() string
}
