package programbench

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"sort"
	"strings"
)

// EvalResult is <instance>.eval.json as ProgramBench's evaluator writes it.
// Fields hoh does not interpret are kept by callers from the raw JSON.
type EvalResult struct {
	TestResults  []TestResult `json:"test_results"`
	ErrorCode    *string      `json:"error_code"`
	ErrorDetails *string      `json:"error_details"`
	TestBranches []string     `json:"test_branches"`
	Warnings     []string     `json:"warnings"`
}

// TestResult is one test's outcome; status is one of passed, skipped,
// failure, error, system_error, not_run.
type TestResult struct {
	Name   string         `json:"name"`
	Branch string         `json:"branch"`
	Status string         `json:"status"`
	Extra  map[string]any `json:"extra"` // required by upstream's model
}

// Score is one instance's result.
type Score struct {
	Passed  int     // results with status "passed"
	Total   int     // non-ignored results
	Dropped int     // results dropped as ignored (branch or test)
	Rate    float64 // Passed/Total in [0,1]; 0 when Total is 0
}

// PassRate is the score on the 0-100 scale.
func (s Score) PassRate() float64 { return 100 * s.Rate }

// scoreResults applies ProgramBench's rule: drop results of ignored branches
// and of ignored tests (matched as branch/name), then passed / remaining;
// only status "passed" counts. When tests is known, results of branches it
// does not list are dropped as well (the evaluator scores active branches
// only); with tests nil nothing can be dropped.
func scoreResults(results []TestResult, tests *TestsFile) Score {
	ignored := map[string]bool{}
	active := map[string]bool{}
	if tests != nil {
		for id, b := range tests.Branches {
			if !b.Ignored {
				active[id] = true
			}
			for _, t := range b.IgnoredTests {
				ignored[id+"/"+t.Name] = true
			}
		}
	}
	var s Score
	for _, r := range results {
		if tests != nil && (!active[r.Branch] || ignored[r.Branch+"/"+r.Name]) {
			s.Dropped++
			continue
		}
		s.Total++
		if r.Status == "passed" {
			s.Passed++
		}
	}
	if s.Total > 0 {
		s.Rate = float64(s.Passed) / float64(s.Total)
	}
	return s
}

// parseEval decodes an eval.json.
func parseEval(path string, data []byte) (*EvalResult, error) {
	var r EvalResult
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, jsonError(path, data, err)
	}
	return &r, nil
}

// scoreEvalFile reads and scores an <instance>.eval.json for inst.
func scoreEvalFile(inst *Instance, path string) (Score, *EvalResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Score{}, nil, err
	}
	r, err := parseEval(path, data)
	if err != nil {
		return Score{}, nil, err
	}
	return scoreResults(r.TestResults, inst.Tests), r, nil
}

// junit mirrors the parts of a JUnit XML report that matter for scoring.
type junitCase struct {
	Name      string    `xml:"name,attr"`
	Classname string    `xml:"classname,attr"`
	Failure   *struct{} `xml:"failure"`
	Error     *struct{} `xml:"error"`
	Skipped   *struct{} `xml:"skipped"`
}

type junitSuite struct {
	Cases  []junitCase  `xml:"testcase"`
	Suites []junitSuite `xml:"testsuite"`
}

func (s junitSuite) all(out []junitCase) []junitCase {
	out = append(out, s.Cases...)
	for _, c := range s.Suites {
		out = c.all(out)
	}
	return out
}

// resultsFromJUnit turns one branch's JUnit XML (pytest --junitxml) into test
// results named classname.name, and adds a not_run result for every expected
// test missing from the XML, as ProgramBench's evaluator does.
func resultsFromJUnit(branch string, data []byte, expected []string) ([]TestResult, error) {
	var root junitSuite
	if err := xml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("JUnit XML of branch %s: %w", branch, err)
	}
	var out []TestResult
	got := map[string]bool{}
	for _, c := range root.all(nil) {
		name := c.Name
		if c.Classname != "" {
			name = c.Classname + "." + c.Name
		}
		status := "passed"
		switch {
		case c.Failure != nil:
			status = "failure"
		case c.Error != nil:
			status = "error"
		case c.Skipped != nil:
			status = "skipped"
		}
		got[name] = true
		out = append(out, TestResult{Name: name, Branch: branch, Status: status, Extra: map[string]any{}})
	}
	for _, name := range expected {
		if !got[name] {
			out = append(out, TestResult{Name: name, Branch: branch, Status: "not_run",
				Extra: map[string]any{"error_code": "missing_from_junit_xml"}})
		}
	}
	return out, nil
}

// scoreJUnitBranches scores a compiled workspace from its per-branch JUnit
// XML files (branch id -> path), so that a sandbox runner only has to run
// each branch's eval/run.sh and collect results.xml. Active branches without
// a file count all their tests as not_run.
func scoreJUnitBranches(inst *Instance, xmlByBranch map[string]string) (Score, []TestResult, error) {
	var results []TestResult
	var branches []string
	if inst.Tests != nil {
		for id, b := range inst.Tests.Branches {
			if !b.Ignored {
				branches = append(branches, id)
			}
		}
	} else {
		for id := range xmlByBranch {
			branches = append(branches, id)
		}
	}
	sort.Strings(branches)
	for _, id := range branches {
		var expected []string
		if inst.Tests != nil {
			expected = inst.Tests.Branches[id].Tests
		}
		path, ok := xmlByBranch[id]
		if !ok {
			r, _ := resultsFromJUnit(id, []byte("<testsuites/>"), expected)
			results = append(results, r...)
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return Score{}, nil, err
		}
		r, err := resultsFromJUnit(id, data, expected)
		if err != nil {
			return Score{}, nil, fmt.Errorf("%s: %w", path, err)
		}
		results = append(results, r...)
	}
	return scoreResults(results, inst.Tests), results, nil
}

// Summary is the benchmark-level result over a set of instances.
type Summary struct {
	Instances      int     // instances in the evaluated set
	Scored         int     // instances with a score (others count 0)
	AvgPassRate    float64 // mean pass rate, 0-100, missing instances as 0
	Resolved       int     // pass rate 100 %
	AlmostResolved int     // pass rate >= 95 % (resolved included)
}

// summarize computes Avg. Test Pass Rate over instances from pass rates on
// the 0-100 scale; instances without a rate count 0.
func summarize(instances []string, passRates map[string]float64) Summary {
	s := Summary{Instances: len(instances)}
	if len(instances) == 0 {
		return s
	}
	sum := 0.0
	for _, id := range instances {
		r, ok := passRates[id]
		if !ok {
			continue
		}
		s.Scored++
		sum += r
		if r >= 100-1e-9 {
			s.Resolved++
		}
		if r >= 95-1e-9 {
			s.AlmostResolved++
		}
	}
	s.AvgPassRate = sum / float64(len(instances))
	return s
}

func (s Summary) String() string {
	return strings.TrimSpace(fmt.Sprintf("avg pass rate %.2f%% over %d instances (%d scored), resolved %d, almost resolved %d",
		s.AvgPassRate, s.Instances, s.Scored, s.Resolved, s.AlmostResolved))
}

// toyPrefix marks upstream's toy instances (testorg__calculator.abc1234, the
// evaluator's own test fixture): they load and run, but are no part of the
// paper's 200 instances or its aggregates.
const toyPrefix = "testorg__"

// isToy reports whether an instance is one of upstream's toys.
func isToy(id string) bool { return strings.HasPrefix(id, toyPrefix) }

// paperInstances are the ids aggregates run over: every instance but the toys.
func paperInstances(ids []string) []string {
	var out []string
	for _, id := range ids {
		if !isToy(id) {
			out = append(out, id)
		}
	}
	return out
}

// PaperSummaries gives both aggregates over the non-toy instances: the
// leaderboard's (every instance, a missing one counting 0) and the one over
// the instances attempted (those with a pass rate).
func PaperSummaries(ids []string, passRates map[string]float64) (leaderboard, attempted Summary) {
	paper := paperInstances(ids)
	var tried []string
	for _, id := range paper {
		if _, ok := passRates[id]; ok {
			tried = append(tried, id)
		}
	}
	return summarize(paper, passRates), summarize(tried, passRates)
}
