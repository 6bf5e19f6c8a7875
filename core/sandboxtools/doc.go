// Package sandboxtools is what an agent does in its project's tree: the
// sandbox tools (exec_command with named shells, read_file, list_files,
// write_file, edit_file, apply_patch) run through a run's Workspace, which
// acquires the project's instance on first use and lets it go at teardown.
// It speaks only the runtime-neutral sandbox port, through a
// sandboxes.Lease.
package sandboxtools
