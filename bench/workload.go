package bench

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
)

// Workload is one benchmark run on an emulated machine: it builds its task
// groups and tasks, says when it is finished, and reports its result the
// way the real tool prints it.
type Workload interface {
	// Setup creates the workload's groups and tasks on s.
	Setup(s *emu.Sim) error
	// Limit is the run's virtual-time budget in ns: the tool's duration
	// (-l, -r), or a safety bound for a workload that ends by itself.
	Limit() int64
	// Done reports whether the workload has finished (all loops done);
	// called at barriers. A duration-bound workload returns false.
	Done(s *emu.Sim) bool
	// Report prints the result in the real tool's format, after the run.
	Report(w io.Writer, s *emu.Sim) error
	// Metrics are the result's numbers, for -json and compare.
	Metrics(s *emu.Sim) Metrics
}

// Metrics is a workload's result as numbers.
type Metrics struct {
	// Primary names the key metric in Values (what compare reports).
	Primary string `json:"primary"`
	// HigherIsBetter says how to read a change of Primary.
	HigherIsBetter bool               `json:"higher_is_better"`
	Values         map[string]float64 `json:"values"`
}

// Spec registers a workload: its name, a line of documentation, usage
// examples, and a constructor that declares the tool's flags on a flag set
// and returns a function building the workload for a machine once the
// flags are parsed. That function validates the flags against the
// machine, and its errors name the flag and the allowed values.
type Spec struct {
	Name     string
	Doc      string
	Examples []string
	Flags    func(fs *flag.FlagSet) func(m *hwmodel.Machine) (Workload, error)
	// Args, when set, takes the positional arguments (ParseArgs), in
	// order; ArgsUsage shows them in the usage line. Nil: flags only.
	Args      func(args []string) error
	ArgsUsage string
}

var registry = map[string]Spec{}

// Register adds a workload (from an init function).
func Register(s Spec) {
	if _, dup := registry[s.Name]; dup {
		panic("bench: workload " + s.Name + " registered twice")
	}
	registry[s.Name] = s
}

// Names lists the registered workloads.
func Names() []string {
	var n []string
	for k := range registry {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Lookup finds a workload by name.
func Lookup(name string) (Spec, error) {
	s, ok := registry[name]
	if !ok {
		return Spec{}, &FlagError{Flag: "-workload", Msg: fmt.Sprintf("unknown workload %q (allowed: %s)", name, strings.Join(Names(), ", "))}
	}
	return s, nil
}

// FlagError is bad input to a workload: the flag, and what is wrong.
type FlagError struct {
	Flag string
	Msg  string
}

func (e *FlagError) Error() string { return e.Flag + ": " + e.Msg }

func flagErr(flag, format string, args ...any) error {
	return &FlagError{Flag: flag, Msg: fmt.Sprintf(format, args...)}
}

// Common are the options every workload takes.
type Common struct {
	// Cgroup is the task group path the workload runs in ("" is the
	// root; "docker" a docker-like container one level down;
	// "system.slice/docker" two levels).
	Cgroup string
}

// AddCommon declares the common flags.
func AddCommon(fs *flag.FlagSet, c *Common) {
	fs.StringVar(&c.Cgroup, "cgroup", "", "run in this cgroup path (e.g. docker, or system.slice/docker); empty: the root group")
}

// Group creates (or finds) the workload's task group on s.
func (c *Common) Group(s *emu.Sim) (*emu.TaskGroup, error) {
	if c.Cgroup == "" {
		return nil, nil
	}
	parts := strings.Split(strings.Trim(c.Cgroup, "/"), "/")
	if len(parts) > MaxGroupDepth {
		return nil, flagErr("-cgroup", "%d levels is too deep (allowed: at most %d path elements)", len(parts), MaxGroupDepth)
	}
	if i := strings.IndexFunc(c.Cgroup, unicode.IsControl); i >= 0 {
		return nil, flagErr("-cgroup", "%q holds a control character (allowed: printable path elements)", c.Cgroup)
	}
	var parent *emu.TaskGroup
	for _, part := range parts {
		if part == "" {
			return nil, flagErr("-cgroup", "%q has an empty path element", c.Cgroup)
		}
		g, err := s.NewGroup(part, parent, 100)
		if err != nil {
			return nil, flagErr("-cgroup", "%v", err)
		}
		parent = g
	}
	return parent, nil
}

// MaxGroupDepth bounds a task group path (-cgroup, rt-app's taskgroup):
// the kernel sets no limit (cgroup.max.depth is unlimited by default),
// but each level costs a sched_entity and cfs_rq per CPU here, and no
// real hierarchy is anywhere near 64 deep (systemd's is 3 or 4).
const MaxGroupDepth = 64

// pairStarts are the allowed values of the paired workloads' -start.
var pairStarts = []string{"spread", "fork"}

// addPairStart declares -start for a workload of client/server pairs
// (netperf, sysbench).
func addPairStart(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "start", "spread", "where the pairs start: spread (side by side on Spread's CPUs, where wake_affine() settles a pair) or fork (where fork balancing puts each task: the clients forked by one parent, the servers by another; emu.Sim.ForkCPU)")
}

func checkPairStart(v string) error {
	if !slices.Contains(pairStarts, v) {
		return flagErr("-start", "unknown start %q (allowed: %s)", v, strings.Join(pairStarts, ", "))
	}
	return nil
}

// pairPlacer gives the CPUs a paired workload's tasks start on. With
// -start fork, every task is placed by select_task_rq_fair(WF_FORK) from
// its parent (emu.Sim.ForkCPU, fair.c v6.6): the clients from the tool's
// process (lkp's shell forking netperf, sysbench's main thread creating
// its threads) on Spread(s, 0), the servers from the daemon that forks
// one per connection (netserver, the postmaster) on Spread(s, 1); they
// are forked in pair order, a client then its server. Simplified: the
// real tool forks its clients in a burst and the daemon forks as the
// connections arrive, so the real order interleaves less evenly.
type pairPlacer struct {
	s                    *emu.Sim
	fork                 bool
	cliParent, srvParent int
}

func newPairPlacer(s *emu.Sim, start string) *pairPlacer {
	p := &pairPlacer{s: s, fork: start == "fork"}
	if p.fork {
		p.cliParent, p.srvParent = Spread(s, 0), Spread(s, 1)
	}
	return p
}

// client is where pair i's client starts.
func (p *pairPlacer) client(i int) int {
	if p.fork {
		return p.s.ForkCPU(p.cliParent, nil)
	}
	return Spread(p.s, 2*i)
}

// server is where pair i's server starts.
func (p *pairPlacer) server(i int) int {
	if p.fork {
		return p.s.ForkCPU(p.srvParent, nil)
	}
	return Spread(p.s, 2*i+1)
}

// daemon is where one more task of the servers' side starts: a fork of
// the daemon, or Spread's k-th CPU.
func (p *pairPlacer) daemon(k int) int {
	if p.fork {
		return p.s.ForkCPU(p.srvParent, nil)
	}
	return Spread(p.s, k)
}

// Spread places a workload's i-th task on a CPU: round robin over the
// machine's CPUs in an order that fills one thread of every core first,
// LLC by LLC. Which of an LLC's idle cores a task lands on varies from
// run to run on a real machine, so the order of the cores inside each LLC
// is a permutation drawn from the run's seed; the LLCs keep their share.
//
// Spread is where a long run settles, not where the kernel forks: the
// kernel's fork balancing (emu.Sim.ForkCPU) alternates the sockets of a
// 2-socket machine fork by fork, so a netperf client and its netserver,
// forked one after the other by two parents, start on different sockets
// and wake_affine() pulls them together over the first milliseconds. The
// real runs last minutes, the emulated ones milliseconds: forked, a 4 ms
// UDP_RR run at 50% of spr-2s is all that transient (2.5 M migrations/s
// and update_cfs_group 18.6% of the cycles, against none and 1.4% from
// Spread; published, the 50% run has no tg->load_avg cost at all, its
// ratelimit changes nothing). So the pairs of netperf and sysbench start
// side by side on Spread's CPUs (their -start fork starts them where the
// kernel forks them instead: pairPlacer), and the tools whose tasks do
// not settle in pairs (hackbench, perf bench sched messaging: 20 senders
// to 20 receivers per group) start where ForkCPU puts them.
func Spread(s *emu.Sim, i int) int {
	order := spreadOrder(s)
	return order[i%len(order)]
}

// spreadCache keeps the last run's order (workloads place their tasks one
// by one).
var spreadCache struct {
	sync.Mutex
	s     *emu.Sim
	order []int
}

func spreadOrder(s *emu.Sim) []int {
	spreadCache.Lock()
	defer spreadCache.Unlock()
	if spreadCache.s == s {
		return spreadCache.order
	}
	m := s.Machine()
	rng := rand.New(rand.NewPCG(s.Seed(), 0x737072656164)) // "spread"
	cores := slices.Clone(m.Cores)
	// Permute each LLC's run of cores in place.
	for lo := 0; lo < len(cores); {
		hi := lo + 1
		for hi < len(cores) && m.CPUs[cores[hi][0]].LLC == m.CPUs[cores[lo][0]].LLC {
			hi++
		}
		blk := cores[lo:hi]
		rng.Shuffle(len(blk), func(a, b int) { blk[a], blk[b] = blk[b], blk[a] })
		lo = hi
	}
	var order []int
	maxThreads := 0
	for _, c := range cores {
		maxThreads = max(maxThreads, len(c))
	}
	for th := 0; th < maxThreads; th++ {
		for _, c := range cores {
			if th < len(c) {
				order = append(order, c[th])
			}
		}
	}
	spreadCache.s, spreadCache.order = s, order
	return order
}

// MaxSeconds bounds the virtual time of every run: a duration flag, a
// time-per-operation flag, or a workload's own safety bound. 1e6 s (11.6
// days) is far more than a host can emulate, and far below the overflow
// of int64 nanoseconds.
const MaxSeconds = 1_000_000

// MinSeconds is the shortest fractional duration a flag takes (sysbench
// --time, rt-app -d): the real tools take whole seconds; below a
// millisecond a run is a few scheduler ticks' worth of nothing.
const MinSeconds = 1e-3

// maxVirtualNS is MaxSeconds in ns.
const maxVirtualNS = MaxSeconds * int64(1e9)

// unitNS converts an integer flag v given in units of unit ns (named
// unitName: "usec", "ms", "s") to ns, after checking lo <= v and that the
// result is at most MaxSeconds: an error names the flag and the range.
func unitNS(flag string, v int, lo int, unit int64, unitName string) (int64, error) {
	hi := maxVirtualNS / unit
	if int64(v) < int64(lo) || int64(v) > hi {
		return 0, flagErr(flag, "%d %s is out of range (allowed: %d..%d %s, at most %d s of virtual time)", v, unitName, lo, hi, unitName, MaxSeconds)
	}
	return int64(v) * unit, nil
}

// capNS saturates a virtual-time bound computed in float64 at
// maxVirtualNS (NaN and negatives are 1 s).
func capNS(ns float64) int64 {
	switch {
	case !(ns > 0):
		return 1e9
	case ns >= float64(maxVirtualNS):
		return maxVirtualNS
	}
	return int64(ns)
}

// LimitNoter is implemented by workloads that end by themselves: the note
// says what their safety bound (Limit) is made of, for the error of a run
// that reaches it unfinished.
type LimitNoter interface{ LimitNote() string }

// OutputFile is a file a workload writes itself (schbench -j): the flag
// that names it and its path ("-" is stdout).
type OutputFile struct{ Flag, Path string }

// RunInfo is what a workload's own files record of the run besides its
// flags, as the real tool takes it from the system.
type RunInfo struct {
	// Args are the workload's own arguments as given (without emu's).
	Args []string
	// Kernel is the feature set run (uname's release for the tool).
	Kernel string
	// Unix is the wall-clock time, in seconds since the epoch.
	Unix int64
}

// FileWriter is implemented by workloads with output files of their own:
// Files lists them (emu run checks them before the run; none when the
// flag is unset) and WriteFiles writes them after it, "-" to stdout.
type FileWriter interface {
	Files() []OutputFile
	WriteFiles(stdout io.Writer, s *emu.Sim, info RunInfo) error
}

// taskMM is the address space of a tool's i-th task (emu.TaskSpec.MM):
// threads share the tool's one mm, processes each have their own (a
// switch between two of them pays switch_mm, as in the real tools' process
// modes: hackbench -P, perf bench sched pipe without -T).
func taskMM(threads bool, i int) int {
	if threads {
		return 1
	}
	return 2 + i
}

// forkedChild is a tool's child process, forked just before the tool's
// measurement: its first action first takes the copy-on-write faults its
// first steps do on the memory it still shares with the parent (mm/memory.c
// do_wp_page() -> wp_page_copy(), v6.6; hwmodel.OpPageFault each), then
// runs as prog. Simplified: the faults are charged together, as kernel
// time, at the child's first action, not spread over its first
// instructions (most come on its exit path: see exitWork). Before its
// exit it runs exitWork ns in user mode: exit(3)'s __run_exit_handlers()
// and _dl_fini(), the tool's libraries' destructors (0: none modeled).
// Its exit's teardown (exit_mmap()) is the Exit action's
// (Action.With(hwmodel.OpExitMMAP)).
func forkedChild(prog emu.Program, faults int, exitWork int64) emu.Program {
	if faults == 0 && exitWork == 0 {
		return prog
	}
	first := true        // owned by the task's CPU
	var exit *emu.Action // the exit, held back behind the exit work
	return emu.ProgramFunc(func(t *emu.Task) emu.Action {
		if exit != nil {
			a := *exit
			exit = nil
			return a
		}
		a := prog.Next(t)
		if a.Op == emu.ActExit && exitWork > 0 {
			held := a
			exit, a = &held, emu.Run(exitWork)
		}
		if first {
			first = false
			a.Kernel = append(slices.Repeat([]hwmodel.KernelOp{hwmodel.OpPageFault}, faults), a.Kernel...)
		}
		return a
	})
}
