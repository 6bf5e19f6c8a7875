package tools

// OriginSandbox marks the tools a project-bound session gets: commands and
// files in the project's tree. They come with the project, not the agent,
// so /agents/:id/tools never lists them.
const OriginSandbox = "sandbox"

// Names of the sandbox tools.
const (
	ExecCommand = "exec_command"
	ReadFile    = "read_file"
	ListFiles   = "list_files"
	WriteFile   = "write_file"
	EditFile    = "edit_file"
	ApplyPatch  = "apply_patch"
)

// Sandbox is the sandbox tool surface, in the order the model sees it.
var Sandbox = []Spec{
	{
		Name: ExecCommand,
		Description: "Run a shell command in the project's sandbox (a Linux container; the project's files are in /workspace, " +
			"the default working directory). Returns the exit code, stdout and stderr (each capped at 32 KiB, head and tail kept). " +
			"Pass session_id to run in a named shell that stays open for the rest of this run, so cd, exported variables and " +
			"activated environments carry over between calls.",
		Parameters: parametersOf[ExecCommandArgs](),
		Origin:     OriginSandbox,
		Streams:    true,
	},
	{
		Name: ReadFile,
		Description: "Read a text file from the project (paths are relative to /workspace). Up to 64 KiB of it is shown; " +
			"use offset and limit (lines) to read a large file in parts.",
		Parameters: parametersOf[ReadFileArgs](),
		Origin:     OriginSandbox,
		ReadOnly:   true,
	},
	{
		Name:        ListFiles,
		Description: "List the files and directories under a path of the project (directories end with /).",
		Parameters:  parametersOf[ListFilesArgs](),
		Origin:      OriginSandbox,
		ReadOnly:    true,
	},
	{
		Name:        WriteFile,
		Description: "Create or overwrite a file in the project with the given content; missing directories are created.",
		Parameters:  parametersOf[WriteFileArgs](),
		Origin:      OriginSandbox,
	},
	{
		Name: EditFile,
		Description: "Replace text in a file of the project: old_string must appear exactly once (or set replace_all). " +
			"Include enough surrounding lines to make it unique.",
		Parameters: parametersOf[EditFileArgs](),
		Origin:     OriginSandbox,
	},
	{
		Name: ApplyPatch,
		Description: "Add, delete, rename and edit files of the project in one patch; all of it applies or none. Format:\n" +
			"*** Begin Patch\n*** Add File: path\n+line of the new file\n*** Delete File: path\n" +
			"*** Update File: path\n*** Move to: new/path (optional)\n@@ a line just above the change, e.g. the function's signature (optional)\n" +
			" context line (unchanged)\n-removed line\n+added line\n*** End Patch\n" +
			"Give about three unchanged lines of context above and below each change, copied exactly; paths are relative to /workspace.",
		Parameters: parametersOf[ApplyPatchArgs](),
		Origin:     OriginSandbox,
	},
}

// ExecCommandArgs are exec_command's arguments.
type ExecCommandArgs struct {
	Cmd            string  `json:"cmd" jsonschema:"The shell command"`
	Workdir        *string `json:"workdir,omitempty" jsonschema:"Working directory (default /workspace; relative paths are under /workspace)"`
	SessionID      *string `json:"session_id,omitempty" jsonschema:"Name of a persistent shell to run in (created on first use)"`
	TimeoutSeconds *int    `json:"timeout_seconds,omitempty" jsonschema:"Give up after this many seconds (default 600, at most 3600)"`
}

// ReadFileArgs are read_file's arguments.
type ReadFileArgs struct {
	Path   string `json:"path"`
	Offset *int   `json:"offset,omitempty" jsonschema:"First line to return, 1-based (default 1)"`
	Limit  *int   `json:"limit,omitempty" jsonschema:"How many lines to return (default: all that fit)"`
}

// ListFilesArgs are list_files' arguments.
type ListFilesArgs struct {
	Path  *string `json:"path,omitempty" jsonschema:"Directory to list (default /workspace)"`
	Depth *int    `json:"depth,omitempty" jsonschema:"How many levels deep (default 2, at most 10)"`
}

// WriteFileArgs are write_file's arguments.
type WriteFileArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// EditFileArgs are edit_file's arguments.
type EditFileArgs struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll *bool  `json:"replace_all,omitempty"`
}

// ApplyPatchArgs are apply_patch's arguments.
type ApplyPatchArgs struct {
	Input string `json:"input" jsonschema:"The whole patch, from *** Begin Patch to *** End Patch"`
}
