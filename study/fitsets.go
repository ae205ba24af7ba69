package study

// The fit sets of `emu fit` (issue 42 §2): per preset family, the
// presets whose specs a candidate edits, the calibration rows it is
// fitted to and the constants it varies. Only [E] estimates whose value is
// genuinely uncertain are varied (and the [C] constants they replace),
// never an [R], [D] or [V] figure; at most three per family, so that a
// whole fit stays affordable (fit.go's descent runs every row once per
// candidate).

// Family is one preset family's fit set.
type Family struct {
	Name string
	// Presets are the topologies whose specs a candidate edits: the
	// family's machines (spr-1s is spr-2s's silicon, one socket: it takes
	// spr's values though no calibration row runs on it).
	Presets []string
	// Rows are the calibration rows fitted to: every row that reproduce's
	// rollup runs (not the -all extras, not host-pipe) on the presets
	// (TestFitRowsAreTheFamilysRows).
	Rows []FitRow
	// Consts are the constants varied, in the descent's order.
	Consts []Const
}

// FitRow is a row of a calibration study.
type FitRow struct{ Study, Row string }

// Const is a constant the fit varies: one spec number, or a tied group
// whose first path takes the grid's values and whose others scale with
// it (each keeps its ratio to the first).
type Const struct {
	Paths []string
	Grid  []float64
	// Why it is varied.
	Why string
}

// Name is the constant's name: its paths joined with "+".
func (c Const) Name() string {
	n := c.Paths[0]
	for _, p := range c.Paths[1:] {
		n += "+" + p
	}
	return n
}

// standsFor is what a fitted constant stands for, the tail of its [C]
// source line (fit.go); a path without one keeps its former source.
var standsFor = map[string]string{
	"latency_ns.smt_yield":    "a hardware thread's speed while its SMT sibling runs, as a fraction of its speed alone: everything a busy sibling costs it (the shared execution ports, L1/L2 and decoders, power and turbo), on this kernel-heavy code",
	"costs_cycles.pipe_write": "pipe_write() for a small message without the shared-line traffic the coherence model prices: the pipe mutex, copy_page_from_iter() and wake_up_interruptible_sync_poll() without the ttwu",
	"costs_cycles.pipe_read":  "pipe_read() for a small message without the shared-line traffic the coherence model prices (scaled with pipe_write)",
	"costs_cycles.unix_send":  "unix_stream_sendmsg() of a 100-byte message without the ttwu (skb alloc, copy-in, the peer's queue lock and queue, sk_data_ready())",
	"costs_cycles.unix_recv":  "unix_stream_recvmsg() of one queued 100-byte skb without the ttwu (scaled with unix_send)",
}

// smtYieldGrid spans Hyper-Threading's and SMT's published range (a core
// running two threads at 1.2-1.3x one thread: 0.6-0.65 each) and the
// former fit's 0.4, with room either side.
var smtYieldGrid = fitGrid(0.3, 0.8, 0.1)

// smtYield is every family's first constant: the one the former fit (to
// one curve) set on spr, and an estimate by analogy on icl and epyc.
var smtYield = Const{Paths: []string{"latency_ns.smt_yield"}, Grid: smtYieldGrid,
	Why: "[E] on icl and epyc, [C] to one curve on spr: how much a busy sibling slows a thread on kernel code is not published; every row's CPUs run both threads"}

// pipeCosts: pipe_write and pipe_read at 450 cycles each are an estimate
// from the path's code length, and the profiles say the pipe path
// costs several times too much; tied, since one message crosses both.
var pipeCosts = Const{Paths: []string{"costs_cycles.pipe_write", "costs_cycles.pipe_read"},
	Grid: []float64{150, 225, 300, 450, 675},
	Why:  "[E] from code length; the hackbench pipe rows' throughput rests on it"}

// unixCosts: unix_send and unix_recv are 4x pipe_write, a ratio measured
// on the dev VM; the absolute cost on a server core is not measured.
var unixCosts = Const{Paths: []string{"costs_cycles.unix_send", "costs_cycles.unix_recv"},
	Grid: []float64{900, 1200, 1800, 2700},
	Why:  "[E] a dev-VM ratio to pipe_write; the hackbench socket rows' throughput rests on it"}

// Families are the fit sets, by name.
var Families = []*Family{
	{Name: "spr", Presets: []string{"spr-2s", "spr-1s"},
		Rows: []FitRow{
			{"tgload-udprr", "100%"}, {"tgload-udprr", "75%"}, {"tgload-udprr", "50%"}, {"tgload-udprr", "25%"},
			{"tgload-hackbench", "g8"}, {"tgload-hackbench", "g16"}, {"tgload-hackbench", "g1"}, {"tgload-hackbench", "g4"},
			{"tgload-profile", "100%"},
			{"lkp-base", "nanosleep-spr"}, {"lkp-base", "hb-spr-process-socket"},
		},
		// Two, not three: one candidate runs eleven rows (the seven
		// besides the within-noise four took about 100 s of host time at
		// -quick on a loaded 2-core VM; the four add about 10 s).
		Consts: []Const{smtYield, pipeCosts}},
	{Name: "icl", Presets: []string{"icl-2s"},
		Rows: []FitRow{
			{"lkp-base", "hb-icl-process-pipe"}, {"lkp-base", "hb-icl-threads-pipe"},
			{"lkp-base", "hb-icl-process-socket"}, {"lkp-base", "hb-icl-threads-socket"},
		},
		Consts: []Const{smtYield, pipeCosts, unixCosts}},
	// One row of three pairs (switches/s, migrations/s, CPUs utilized):
	// one constant, not more than the pairs can pin.
	{Name: "epyc", Presets: []string{"epyc-9654-2s"},
		Rows:   []FitRow{{"lkp-base", "hb-epyc-threads-pipe"}},
		Consts: []Const{smtYield}},
}

// FamilyNames are the families' names.
func FamilyNames() []string {
	var n []string
	for _, f := range Families {
		n = append(n, f.Name)
	}
	return n
}

// LookupFamily finds a family by name.
func LookupFamily(name string) *Family {
	for _, f := range Families {
		if f.Name == name {
			return f
		}
	}
	return nil
}
