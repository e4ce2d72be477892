// Command server is a TEST DOUBLE for the MCP server of Harbor's hello-mcp
// example (a FastMCP server, which needs Python packages this machine cannot
// fetch): the same get_secret tool over stdio (default) or streamable HTTP
// (-http ADDR, serving /mcp), built static so it runs in a busybox image.
// Each call is appended to -calls FILE, so a test can see the server was
// reached; -probe ADDR is its healthcheck.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Secret is what hello-mcp's server returns.
const Secret = "harbor-mcp-secret-12345"

type noArgs struct{}

func main() {
	addr := flag.String("http", "", "serve streamable HTTP at ADDR (path /mcp) instead of stdio")
	calls := flag.String("calls", "", "append one line per tool call to this file")
	probe := flag.String("probe", "", "exit 0 when ADDR accepts a TCP connection (a healthcheck), else 1")
	flag.Parse()
	if *probe != "" {
		c, err := net.DialTimeout("tcp", *probe, 2*time.Second)
		if err != nil {
			os.Exit(1)
		}
		c.Close()
		return
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "hello-mcp", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "get_secret", Description: "Returns a secret value.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			if *calls != "" {
				if f, err := os.OpenFile(*calls, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o666); err == nil {
					fmt.Fprintln(f, "get_secret")
					f.Close()
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: Secret}}}, nil, nil
		})
	if *addr == "" {
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
		return
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	log.Fatal(http.ListenAndServe(*addr, mux))
}
