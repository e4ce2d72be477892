package config

import (
	"bytes"
	"fmt"
	"math/big"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hoh-research/hoh/runrecord"
)

// PriceTable is the prices: section as written: USD per million tokens by
// "provider/model" or "model", each amount a decimal kept as its literal so
// that costs are exact.
type PriceTable map[string]PriceEntry

// PriceEntry is one model's prices; cached_input defaults to input,
// cache_write_5m and cache_write_1h to 1.25x and 2x input (Anthropic's
// published multipliers) and reasoning to output.
type PriceEntry struct {
	Input        string `yaml:"input"`
	CachedInput  string `yaml:"cached_input"`
	CacheWrite5m string `yaml:"cache_write_5m"`
	CacheWrite1h string `yaml:"cache_write_1h"`
	Output       string `yaml:"output"`
	Reasoning    string `yaml:"reasoning"`
}

// ExportFormats are the names export: accepts.
var ExportFormats = []string{"atif"}

// Prices is the table as exact prices; entries that do not parse were
// reported when the config was loaded.
func (t PriceTable) Prices() (runrecord.Prices, error) {
	out := runrecord.Prices{}
	names := make([]string, 0, len(t))
	for k := range t {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p, err := t[k].price()
		if err != nil {
			return nil, fmt.Errorf("prices.%s: %w", k, err)
		}
		out[k] = p
	}
	return out, nil
}

func (e PriceEntry) price() (runrecord.Price, error) {
	var p runrecord.Price
	for _, f := range []struct {
		name, s  string
		dst      **big.Rat
		required bool
	}{{"input", e.Input, &p.Input, true}, {"cached_input", e.CachedInput, &p.CachedInput, false},
		{"cache_write_5m", e.CacheWrite5m, &p.CacheWrite5m, false}, {"cache_write_1h", e.CacheWrite1h, &p.CacheWrite1h, false},
		{"output", e.Output, &p.Output, true}, {"reasoning", e.Reasoning, &p.Reasoning, false}} {
		if f.s == "" {
			if f.required {
				return p, fmt.Errorf("%s (USD per million tokens) is missing", f.name)
			}
			continue
		}
		r, err := runrecord.ParseUSD(f.s)
		if err != nil {
			return p, fmt.Errorf("%s: %w", f.name, err)
		}
		*f.dst = r
	}
	return p, nil
}

// PriceOf is the price of a configuration's model (ok false: unknown). A
// role team whose roles talk to different models has no one price: what
// its trials cost is priced per role (PriceOfRole) in their ledgers and
// score rows, and anything that would price its usage as one sum gets
// ok false rather than a wrong number.
func (e *Experiment) PriceOf(label string) (runrecord.Price, bool) {
	h, found := e.Config(label)
	if !found {
		return runrecord.Price{}, false
	}
	ps, err := e.Prices.Prices()
	if err != nil {
		return runrecord.Price{}, false
	}
	for _, role := range runrecord.Roles {
		if r := h.ForRole(role).Provider; r.Name != h.Provider.Name || r.Model != h.Provider.Model {
			return runrecord.Price{}, false
		}
	}
	return ps.Lookup(h.Provider.Name, h.Provider.Model)
}

// PriceOfRole is the price of the model role runs in the configuration
// with label: its own agent's in a role team, else the configuration's.
func (e *Experiment) PriceOfRole(label string, role runrecord.Role) (runrecord.Price, bool) {
	h, found := e.Config(label)
	if !found {
		return runrecord.Price{}, false
	}
	ps, err := e.Prices.Prices()
	if err != nil {
		return runrecord.Price{}, false
	}
	h = h.ForRole(role)
	return ps.Lookup(h.Provider.Name, h.Provider.Model)
}

// checkTeamPrices: budget.usd prices a role team's spending role by role,
// so every role's agent (and every agent of a factorial design) needs a
// price.
func (v *validator) checkTeamPrices(ln int, e *Experiment) {
	ps, err := e.Prices.Prices()
	if err != nil {
		return // reported at its line
	}
	missing := func(who string, a AgentSpec) {
		if _, ok := ps.Lookup(a.Provider.Name, a.Provider.Model); !ok {
			v.add(ln, "budget.usd needs a price for every agent of a role team: prices has none for %s (%s/%s)", who, a.Provider.Name, a.Provider.Model)
		}
	}
	for _, c := range e.Configs {
		own := false // some role runs the configuration's own agent
		for _, role := range runrecord.Roles {
			if a := c.Roles.Agent(role); a != nil {
				missing(fmt.Sprintf("%s role %s", c.Label, role), *a)
			} else {
				own = true
			}
		}
		if c.HasTeam() && own {
			missing(c.Label, c.AgentSpec)
		}
	}
	if e.Factorial != nil {
		for _, a := range e.Factorial.Agents {
			missing(fmt.Sprintf("factorial agent %s", a.Name), a.AgentSpec)
		}
	}
}

// BudgetUSD is the dollar budget, nil when there is none.
func (e *Experiment) BudgetUSD() *big.Rat {
	if e.Budget.USD == "" {
		return nil
	}
	r, err := runrecord.ParseUSD(e.Budget.USD)
	if err != nil || r.Sign() == 0 {
		return nil
	}
	return r
}

func (v *validator) checkPrices(doc *yaml.Node, e *Experiment) {
	pn := child(doc, "prices")
	for _, k := range sortedKeys(e.Prices) {
		if _, err := e.Prices[k].price(); err != nil {
			v.add(line(child(pn, k), line(pn, doc.Line)), "prices.%s: %v", k, err)
		}
	}
	bn := child(child(doc, "budget"), "usd")
	if e.Budget.USD != "" {
		if _, err := runrecord.ParseUSD(e.Budget.USD); err != nil {
			v.add(line(bn, doc.Line), "budget.usd: %v (dollars, e.g. 250 or 12.5; leave it out for no dollar budget)", err)
		} else {
			v.checkTeamPrices(line(bn, doc.Line), e)
			for _, c := range e.Configs {
				if _, ok := e.PriceOf(c.Label); !ok && !c.HasTeam() {
					v.add(line(bn, doc.Line), "budget.usd needs a price for every configuration: prices has none for %s (%s/%s)",
						c.Label, c.Provider.Name, c.Provider.Model)
				}
			}
		}
	}
	en := child(doc, "export")
	for _, f := range e.Export {
		known := false
		for _, k := range ExportFormats {
			known = known || f == k
		}
		if !known {
			v.add(line(en, doc.Line), "export: unknown format %q (known: %v)", f, ExportFormats)
		}
	}
}

func sortedKeys(t PriceTable) []string {
	out := make([]string, 0, len(t))
	for k := range t {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// LoadPrices reads a price file (--prices): a YAML file whose prices:
// section is written as in an experiment config.
func LoadPrices(path string) (runrecord.Prices, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// The shape first: a table written without its prices: key (a common
	// slip) would otherwise fail as a Go type in yaml's words.
	var top map[string]any
	if err := yaml.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%s: not YAML: %w", path, err)
	}
	if _, ok := top["prices"]; !ok || len(top) != 1 {
		var keys []string
		for k := range top {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) > 5 {
			keys = append(keys[:5], "...")
		}
		return nil, fmt.Errorf("%s: expected one top-level key, prices:, holding the table in USD per million tokens, e.g.\n"+
			"  prices:\n    openai/gpt-5.5: {input: 1.25, cached_input: 0.125, output: 10}\n"+
			"found top-level key(s): %s (indent the table under prices:)", path, strings.Join(keys, ", "))
	}
	var f struct {
		Prices PriceTable `yaml:"prices"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(f.Prices) == 0 {
		return nil, fmt.Errorf("%s: no prices: section (prices: {provider/model: {input: USD, cached_input: USD, output: USD}})", path)
	}
	ps, err := f.Prices.Prices()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ps, nil
}
