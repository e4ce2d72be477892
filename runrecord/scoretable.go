package runrecord

import (
	"math"
	"math/big"
)

// The table interns what rows share: names, trial arms (benchmark,
// configuration, condition, checkpoint), series (arm and metric), task
// labels (family, group, category) and costs. A row is then 40 bytes
// without pointers: a table of millions of rows is one allocation the
// garbage collector never scans, and memory touched is time (a page fault
// per 4 KiB).
type packedRow struct {
	series, task, labels, source uint32
	cost                         uint32 // 1 + index into costs, 0: unknown; exactBit: the value has an exact form
	rep                          int32
	value                        float64
	tokens                       float64
}

const exactBit = 1 << 31

// ArmKey and SeriesKey are an interned arm's and series' name ids.
type (
	ArmKey struct {
		Benchmark, Config, Condition uint32
		Checkpoint                   int32
	}
	SeriesKey struct {
		Arm    uint32 // arm id
		Metric uint32 // name id
	}
	labelKey struct{ family, group, category uint32 }
)

// ScoreTable holds score rows compactly (40 bytes a row plus what they
// share, and the rare exact values). Row(i) gives row i back as a Row.
type ScoreTable struct {
	names    []string // name id -> name; id 0 is ""
	nameIDs  map[string]uint32
	checked  []bool // names[id] was checked for format characters
	arms     []ArmKey
	armIDs   map[ArmKey]uint32
	series   []SeriesKey
	seriesID map[SeriesKey]uint32
	labels   []labelKey
	labelIDs map[labelKey]uint32
	costs    []*big.Rat
	costIDs  map[string]uint32
	exact    map[int32]*big.Rat
	rows     []packedRow
}

// NewScoreTable returns an empty table with room for n rows.
func NewScoreTable(n int) *ScoreTable {
	return &ScoreTable{names: []string{""}, nameIDs: map[string]uint32{"": 0}, checked: []bool{true},
		armIDs: map[ArmKey]uint32{}, seriesID: map[SeriesKey]uint32{}, labelIDs: map[labelKey]uint32{},
		costIDs: map[string]uint32{}, exact: map[int32]*big.Rat{}, rows: make([]packedRow, 0, n)}
}

// Len is the number of rows.
func (t *ScoreTable) Len() int { return len(t.rows) }

// Row returns row i.
func (t *ScoreTable) Row(i int) Row {
	p := &t.rows[i]
	s := t.series[p.series]
	a := t.arms[s.Arm]
	l := t.labels[p.labels]
	r := Row{
		Benchmark: t.names[a.Benchmark], Config: t.names[a.Config], Condition: t.names[a.Condition], Checkpoint: int(a.Checkpoint),
		Task: t.names[p.task], Family: t.names[l.family], Group: t.names[l.group], Category: t.names[l.category],
		Metric: t.names[s.Metric], Source: t.names[p.source], Rep: int(p.rep), Value: p.value, Tokens: p.tokens,
	}
	if c := p.cost &^ exactBit; c != 0 {
		r.CostUSD = t.costs[c-1]
	}
	if p.cost&exactBit != 0 {
		r.Exact = t.exact[int32(i)]
	}
	return r
}

// Rows returns every row of the table.
func (t *ScoreTable) Rows() []Row {
	out := make([]Row, t.Len())
	for i := range out {
		out[i] = t.Row(i)
	}
	return out
}

// Append adds r.
func (t *ScoreTable) Append(r Row) {
	arm := t.armID(ArmKey{t.intern(r.Benchmark), t.intern(r.Config), t.intern(r.Condition), int32(r.Checkpoint)})
	p := packedRow{series: t.seriesOf(arm, t.intern(r.Metric)), task: t.intern(r.Task),
		labels: t.labelID(labelKey{t.intern(r.Family), t.intern(r.Group), t.intern(r.Category)}),
		source: t.intern(r.Source), rep: int32(r.Rep), value: r.Value, tokens: r.Tokens}
	if r.CostUSD != nil {
		p.cost = t.costID(FormatUSD(r.CostUSD), r.CostUSD)
	}
	if r.Exact != nil {
		p.cost |= exactBit
		t.exact[int32(len(t.rows))] = r.Exact
	}
	t.rows = append(t.rows, p)
}

// Keep returns a table of the rows for which keep(i) is true, in order,
// sharing this table's interned values.
func (t *ScoreTable) Keep(keep func(i int) bool) *ScoreTable {
	out := *t
	out.rows = make([]packedRow, 0, len(t.rows))
	out.exact = map[int32]*big.Rat{}
	for i, p := range t.rows {
		if keep(i) {
			if p.cost&exactBit != 0 {
				out.exact[int32(len(out.rows))] = t.exact[int32(i)]
			}
			out.rows = append(out.rows, p)
		}
	}
	return &out
}

// Interned ids of row i: equal ids are equal values within one table.
func (t *ScoreTable) SeriesID(i int) uint32 { return t.rows[i].series }
func (t *ScoreTable) ArmID(i int) uint32    { return t.series[t.rows[i].series].Arm }
func (t *ScoreTable) Task(i int) uint32     { return t.rows[i].task }
func (t *ScoreTable) Source(i int) uint32   { return t.rows[i].source }
func (t *ScoreTable) Rep(i int) int32       { return t.rows[i].rep }
func (t *ScoreTable) LabelsID(i int) uint32 { return t.rows[i].labels } // family, group and category

// Tokens is row i's token count, NaN when unknown.
func (t *ScoreTable) Tokens(i int) float64 { return t.rows[i].tokens }

// Series and Arm return what an id stands for; NumSeries and NumArms bound
// the ids.
func (t *ScoreTable) Series(id uint32) SeriesKey { return t.series[id] }
func (t *ScoreTable) Arm(id uint32) ArmKey       { return t.arms[id] }
func (t *ScoreTable) NumSeries() int             { return len(t.series) }
func (t *ScoreTable) NumArms() int               { return len(t.arms) }

// Names is the number of distinct names (name ids are below it).
func (t *ScoreTable) Names() int { return len(t.names) }

// Name returns the name of an id.
func (t *ScoreTable) Name(id uint32) string { return t.names[id] }

// NameID returns the id of a name, ok false when no row has it.
func (t *ScoreTable) NameID(s string) (uint32, bool) {
	id, ok := t.nameIDs[s]
	return id, ok
}

// Value returns row i's value, its exact form (nil when the float is the
// decimal written) and its tokens (NaN when unknown).
func (t *ScoreTable) Value(i int) (float64, *big.Rat, float64) {
	p := &t.rows[i]
	if p.cost&exactBit != 0 {
		return p.value, t.exact[int32(i)], p.tokens
	}
	return p.value, nil, p.tokens
}

// SameValue reports whether rows i and j have the same value, tokens and
// labels (every field but the key, the source and the cost).
func (t *ScoreTable) SameValue(i, j int) bool {
	va, ea, ta := t.Value(i)
	vb, eb, tb := t.Value(j)
	sameTokens := ta == tb || math.IsNaN(ta) && math.IsNaN(tb)
	sameValue := va == vb && (ea == nil) == (eb == nil) && (ea == nil || ea.Cmp(eb) == 0)
	return sameValue && sameTokens && t.rows[i].labels == t.rows[j].labels
}

// HasCosts reports whether any row carries a cost.
func (t *ScoreTable) HasCosts() bool {
	for i := range t.rows {
		if t.rows[i].cost&^exactBit != 0 {
			return true
		}
	}
	return false
}

func (t *ScoreTable) intern(s string) uint32 {
	if id, ok := t.nameIDs[s]; ok {
		return id
	}
	id := uint32(len(t.names))
	t.names = append(t.names, s)
	t.nameIDs[s] = id
	t.checked = append(t.checked, false)
	return id
}

// internBytes is intern without a copy of b unless b is new.
func (t *ScoreTable) internBytes(b []byte) uint32 {
	if id, ok := t.nameIDs[string(b)]; ok { // no allocation for the lookup
		return id
	}
	return t.intern(string(b))
}

func (t *ScoreTable) armID(k ArmKey) uint32 {
	if id, ok := t.armIDs[k]; ok {
		return id
	}
	id := uint32(len(t.arms))
	t.arms = append(t.arms, k)
	t.armIDs[k] = id
	return id
}

func (t *ScoreTable) seriesOf(arm, metric uint32) uint32 {
	k := SeriesKey{arm, metric}
	if id, ok := t.seriesID[k]; ok {
		return id
	}
	id := uint32(len(t.series))
	t.series = append(t.series, k)
	t.seriesID[k] = id
	return id
}

func (t *ScoreTable) labelID(k labelKey) uint32 {
	if id, ok := t.labelIDs[k]; ok {
		return id
	}
	id := uint32(len(t.labels))
	t.labels = append(t.labels, k)
	t.labelIDs[k] = id
	return id
}

func (t *ScoreTable) costID(text string, v *big.Rat) uint32 {
	if id, ok := t.costIDs[text]; ok {
		return id
	}
	t.costs = append(t.costs, v)
	id := uint32(len(t.costs))
	t.costIDs[text] = id
	return id
}

// Groups are rows grouped by an id below n, in order of first appearance:
// group g has id Keys[g] and rows Rows[Start[g]:Start[g+1]], in row order.
type Groups struct {
	Keys  []uint32
	Start []int32
	Rows  []int32
}

// Of returns group g's rows.
func (gs *Groups) Of(g int) []int32 { return gs.Rows[gs.Start[g]:gs.Start[g+1]] }

// GroupRows groups the rows for which id gives ok by that id (below n): a
// counting sort, two passes and no map whatever the number of groups.
func (t *ScoreTable) GroupRows(n int, id func(i int) (uint32, bool)) *Groups {
	count := make([]int32, n)
	group := make([]int32, n) // id -> group, by first appearance
	for k := range group {
		group[k] = -1
	}
	gs := &Groups{}
	for i := range t.rows {
		k, ok := id(i)
		if !ok {
			continue
		}
		if group[k] < 0 {
			group[k] = int32(len(gs.Keys))
			gs.Keys = append(gs.Keys, k)
		}
		count[k]++
	}
	gs.Start = make([]int32, len(gs.Keys)+1)
	for g, k := range gs.Keys {
		gs.Start[g+1] = gs.Start[g] + count[k]
	}
	next := count[:0]
	for g := range gs.Keys {
		next = append(next, gs.Start[g])
	}
	gs.Rows = make([]int32, gs.Start[len(gs.Keys)])
	for i := range t.rows {
		if k, ok := id(i); ok {
			g := group[k]
			gs.Rows[next[g]] = int32(i)
			next[g]++
		}
	}
	return gs
}
