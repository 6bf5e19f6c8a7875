package ports

import "context"

// InstanceRefStore records which backend instance holds a project's tree,
// for sandbox types whose instance is its own storage (e2b): a backend
// records the ref of an instance it created before using it, so a crash
// can never leave a billed instance nobody knows about. Core hands the
// recorded ref to the backend in ProjectInstance.InstanceRef.
type InstanceRefStore interface {
	// SwapInstanceRef sets a project's instance ref to next when it is
	// still old: false (and no error) when another writer moved it first;
	// not_found when the project is gone.
	SwapInstanceRef(ctx context.Context, projectID, old, next string) (bool, error)
}
