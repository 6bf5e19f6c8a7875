package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// runHealth is "agents-server health [server flags]": it asks the server
// listening at --addr (on this host: a wildcard address is asked on
// loopback) for /health and exits 0 when it answers ok, 1 otherwise — a
// container's HEALTHCHECK, with no shell or curl in the image.
func runHealth(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseCommandFlags("health", args, stderr, nil)
	if err != nil {
		return flagExit(err, stderr)
	}
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		fmt.Fprintln(stderr, "agents-server: health: --addr:", err)
		return 2
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, port)+"/health", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(stderr, "agents-server: health:", err)
		return 1
	}
	defer resp.Body.Close()
	var h struct {
		Status  string `json:"status"`
		Version string `json:"version"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&h) != nil || h.Status != "ok" {
		fmt.Fprintf(stderr, "agents-server: health: %s answered %d\n", req.URL, resp.StatusCode)
		return 1
	}
	fmt.Fprintln(stdout, "ok", h.Version)
	return 0
}
