package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hoh-research/hoh/runrecord"
)

// LoadRoles reads a roles file: a YAML mapping of planner, developer and qa
// agents written exactly as a configuration's roles: (hoh project init
// --roles). Each agent is checked as checkRoles checks a configuration's,
// every problem at its line of path; unset provider key variables are not
// a problem (the key is read when the agent runs, not when it is named).
// Paths are made absolute against the file's folder.
func LoadRoles(path string) (*RoleAgents, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, rolesProblems{Problems{syntaxProblem(path, err)}}
	}
	if len(root.Content) == 0 {
		return nil, rolesProblems{Problems{{File: path, Line: 1, Msg: "empty roles file (give planner, developer or qa)"}}}
	}
	doc := root.Content[0]
	v := &validator{file: path, offline: true}
	if v.duplicates(doc); len(v.problems) > 0 {
		return nil, rolesProblems{v.problems}
	}
	roles := &RoleAgents{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(roles); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return nil, rolesProblems{Problems{{File: path, Msg: err.Error()}}}
		}
		for _, msg := range te.Errors {
			v.typeError(msg)
		}
		return nil, rolesProblems{v.problems}
	}
	e := &Experiment{File: path}
	if e.dir, err = filepath.Abs(filepath.Dir(path)); err != nil {
		return nil, err
	}
	// The file is what a configuration's roles: key holds: check it there.
	item := &yaml.Node{Kind: yaml.MappingNode, Line: doc.Line,
		Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "roles", Line: doc.Line}, doc}}
	v.checkRoles(e, "", item, doc.Line, HarnessModel{Roles: roles})
	for _, role := range runrecord.Roles {
		if a := roles.Agent(role); a != nil {
			an := child(doc, string(role))
			for _, p := range []string{a.Binary, scriptOf(a.Scripted)} {
				if missing := unsetVars(p); len(missing) > 0 {
					v.add(line(an, doc.Line), "role %s: %q: environment variable %s is not set", role, p, strings.Join(missing, ", "))
				}
			}
			e.absoluteAgent(a)
		}
	}
	if len(v.problems) > 0 {
		return nil, rolesProblems{v.problems}
	}
	return roles, nil
}

// rolesProblems are a roles file's Problems, said to be the file's.
type rolesProblems struct{ Problems }

func (p rolesProblems) Error() string {
	return strings.Replace(p.Problems.Error(), "the experiment config", "the roles file", 1)
}

func (p rolesProblems) Unwrap() error { return p.Problems }
