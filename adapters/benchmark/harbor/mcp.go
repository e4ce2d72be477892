package harbor

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path"
	"path/filepath"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/harness"
)

// mcpKeys are the keys of an [[environment.mcp_servers]] entry Harbor's
// MCPServerConfig has.
var mcpKeys = map[string]bool{"name": true, "transport": true, "url": true, "command": true, "args": true}

// MCPServers reads environment.mcp_servers as Harbor validates it: a name,
// a transport (default "sse", as Harbor's), a url for sse and
// streamable-http, a command (and args) for stdio. Keys Harbor does not
// have are returned as warnings. A server is InEnvironment when it is a
// stdio command or its URL names loopback or one of the task's Compose
// services. Errors name the entry.
func (l Loaded) MCPServers() (servers []harness.MCPServer, warnings []string, err error) {
	services := map[string]bool{}
	if p, _, cerr := loadCompose(context.Background(), l.Task.Dir); cerr == nil && p != nil {
		for n := range p.Services {
			services[n] = true
		}
	}
	seen := map[string]bool{}
	for i, m := range l.File.Environment.MCPServers {
		s, warn, err := mcpServer(m, services)
		if err != nil {
			return nil, nil, fmt.Errorf("environment.mcp_servers[%d]: %w", i, err)
		}
		if seen[s.Name] {
			return nil, nil, fmt.Errorf("environment.mcp_servers[%d]: name %q given twice", i, s.Name)
		}
		seen[s.Name] = true
		for _, w := range warn {
			warnings = append(warnings, fmt.Sprintf("environment.mcp_servers[%d] (%s): %s", i, s.Name, w))
		}
		servers = append(servers, s)
	}
	return servers, warnings, nil
}

func mcpServer(m map[string]any, services map[string]bool) (harness.MCPServer, []string, error) {
	var s harness.MCPServer
	str := func(k string) (string, error) {
		v, ok := m[k]
		if !ok {
			return "", nil
		}
		x, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%s must be a string, got %T", k, v)
		}
		return x, nil
	}
	var err error
	if s.Name, err = str("name"); err != nil {
		return s, nil, err
	}
	if s.Name == "" {
		return s, nil, fmt.Errorf("name is missing")
	}
	if s.Transport, err = str("transport"); err != nil {
		return s, nil, err
	}
	if s.Transport == "" {
		s.Transport = harness.MCPSSE // Harbor's default
	}
	if s.URL, err = str("url"); err != nil {
		return s, nil, err
	}
	if s.Command, err = str("command"); err != nil {
		return s, nil, err
	}
	if raw, ok := m["args"]; ok {
		list, ok := raw.([]any)
		if !ok {
			return s, nil, fmt.Errorf("args must be a list of strings, got %T", raw)
		}
		for _, a := range list {
			x, ok := a.(string)
			if !ok {
				return s, nil, fmt.Errorf("args must be a list of strings, got an element %T", a)
			}
			s.Args = append(s.Args, x)
		}
	}
	switch s.Transport {
	case harness.MCPStdio:
		if s.Command == "" {
			return s, nil, fmt.Errorf("server %q: transport stdio needs a command", s.Name)
		}
		s.InEnvironment = true
	case harness.MCPSSE, harness.MCPStreamableHTTP:
		if s.URL == "" {
			return s, nil, fmt.Errorf("server %q: transport %s needs a url", s.Name, s.Transport)
		}
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return s, nil, fmt.Errorf("server %q: url %q is not an http(s) URL", s.Name, s.URL)
		}
		s.InEnvironment = services[u.Hostname()] || loopbackHost(u.Hostname())
	default:
		return s, nil, fmt.Errorf("server %q: transport %q is not one of stdio, sse, streamable-http", s.Name, s.Transport)
	}
	var warn []string
	for _, k := range sortedKeys(m) {
		if !mcpKeys[k] {
			warn = append(warn, "key "+k+" ignored (Harbor's MCPServerConfig has no such key)")
		}
	}
	return s, warn, nil
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// AgentTools implements environment.ToolGiver: the task's MCP servers
// (environment.mcp_servers) and skills directory (environment.skills_dir,
// a path in the task's environment, made absolute against its workdir).
func (b *Benchmark) AgentTools(t benchmark.Task) (harness.TaskTools, error) {
	l, err := LoadTask(t.Benchmark, t.Dir, "")
	if err != nil {
		return harness.TaskTools{}, err
	}
	servers, _, err := l.MCPServers()
	if err != nil {
		return harness.TaskTools{}, fmt.Errorf("%s: %w", filepath.Join(t.Dir, "task.toml"), err)
	}
	tools := harness.TaskTools{MCP: servers}
	if d := l.File.Environment.SkillsDir; d != "" {
		if !path.IsAbs(d) {
			d = path.Join(orDefault(l.File.Environment.Workdir, "/"), d)
		}
		tools.SkillsDir = path.Clean(d)
	}
	return tools, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// mcpRefusals: an mcp_servers entry Harbor's model would reject.
func (l Loaded) mcpRefusals() []Refusal {
	if _, _, err := l.MCPServers(); err != nil {
		return []Refusal{{filepath.Join(l.Task.Dir, "task.toml"), "environment.mcp_servers", err.Error()}}
	}
	return nil
}

// mcpWarnings are the keys of mcp_servers entries hoh ignores.
func (l Loaded) mcpWarnings() []string {
	_, warnings, _ := l.MCPServers()
	return warnings
}
