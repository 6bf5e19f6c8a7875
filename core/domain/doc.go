// Package domain holds the entities, value objects and pure rules of
// agents-server, one file per noun. It performs no I/O and imports only errs.
package domain
