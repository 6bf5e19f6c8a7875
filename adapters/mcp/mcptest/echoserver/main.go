// Command echoserver is a stdio MCP server for tests, built static so it
// runs in any sandbox image: one tool, echo, answering with its message
// and what it finds where it runs (MODE and GREETING from its environment,
// whether /workspace exists), so a test can tell a program started in a
// project's sandbox from one on the host.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Message string `json:"message" jsonschema:"what to echo"`
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "echoserver", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the message, with where it runs"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			_, err := os.Stat("/workspace")
			text := fmt.Sprintf("echo: %s (MODE=%s GREETING=%s workspace=%v)", in.Message, os.Getenv("MODE"), os.Getenv("GREETING"), err == nil)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	fmt.Fprintln(os.Stderr, "echoserver: ready on stdio")
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
