// Package workbench is the agents-server workbench as a Go library: the
// supported way for a Go program to embed it. Open composes the whole
// workbench (the store, the run engine, the sandboxes, MCP, tasks,
// workflows, triggers) from Options; the returned *Workbench hands out
// facades over the services a program drives directly (Providers, Agents,
// Sessions, Runs, Traces) and, through Handler, an http.Handler
// serving the REST API, the WebSockets and the web UI under a prefix of the
// host's choosing, behind the host's own sign-in. Close drains it.
//
// A program extends the workbench in Go: NewTool turns a function with a
// typed argument struct into a tool agents can be given (its JSON Schema
// derived from the struct), and Options.Models adds provider types whose
// model calls a program-supplied ports.LLM answers.
//
// The agents-server command is built on this package alone.
package workbench
