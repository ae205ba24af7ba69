package hwmodel

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Spec is a machine description as written in a spec file (YAML; JSON is
// accepted too, being YAML). Decoding is strict: an unknown field is an
// error, so a typo cannot silently fall back to a default. A spec describes
// the CPUs either by a regular Layout (how the presets are written) or by an
// explicit per-CPU list mirroring sysfs (what host detection produces); the
// two are exclusive. Build turns a Spec into a validated Machine.
type Spec struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description"`
	Vendor      string `yaml:"vendor" json:"vendor"` // intel, amd, arm, other
	Model       string `yaml:"model" json:"model"`
	Arch        string `yaml:"arch" json:"arch"` // x86_64, arm64
	// FreqMHz is the sustained all-core clock used to turn cycles into ns.
	FreqMHz float64 `yaml:"freq_mhz" json:"freq_mhz"`
	// FreqRefMHz is the clock the kernel's frequency invariance measures
	// against (arch_max_freq_ratio x base: the 4-core turbo on Intel,
	// aperfmperf.c core_set_max_freq_ratio(); the highest boost on AMD,
	// the CPPC highest_perf ratio); a CPU running at FreqMHz has
	// arch_scale_freq_capacity() = 1024 x FreqMHz / FreqRefMHz, at most
	// 1024. Optional: 0 means FreqMHz (no scaling).
	FreqRefMHz float64 `yaml:"freq_ref_mhz,omitempty" json:"freq_ref_mhz,omitempty"`
	// HZ is the kernel's tick rate (CONFIG_HZ) the target runs with.
	HZ int `yaml:"hz" json:"hz"`

	Layout *Layout   `yaml:"layout,omitempty" json:"layout,omitempty"`
	CPUs   []CPUSpec `yaml:"cpus,omitempty" json:"cpus,omitempty"`

	// NUMADistance is the ACPI SLIT as /sys/devices/system/node/node*/distance
	// prints it: one row per node, 10 on the diagonal.
	NUMADistance [][]int `yaml:"numa_distance" json:"numa_distance"`

	Caches  CacheSpec   `yaml:"caches" json:"caches"`
	Latency LatencySpec `yaml:"latency_ns" json:"latency_ns"`
	Costs   CostSpec    `yaml:"costs_cycles" json:"costs_cycles"`
}

// Layout describes a regular machine: sockets of LLCs of cores. CPUs are
// numbered as Linux numbers them on x86 ("linux": every core's first thread
// in socket-major core order, then every core's second thread, so SMT
// siblings are ncores apart: arch/x86 enumerates the first threads first) or
// with siblings adjacent ("adjacent", as some arm64 and Windows-style tables).
type Layout struct {
	Sockets        int    `yaml:"sockets" json:"sockets"`
	LLCsPerSocket  int    `yaml:"llcs_per_socket" json:"llcs_per_socket"`
	CoresPerLLC    int    `yaml:"cores_per_llc" json:"cores_per_llc"`
	CoresPerL2     int    `yaml:"cores_per_l2" json:"cores_per_l2"`
	ThreadsPerCore int    `yaml:"threads_per_core" json:"threads_per_core"`
	NodesPerSocket int    `yaml:"nodes_per_socket" json:"nodes_per_socket"`
	Numbering      string `yaml:"numbering" json:"numbering"`
}

// CPUSpec is one logical CPU as sysfs describes it:
// cpuN/topology/{physical_package_id,core_id,thread_siblings_list},
// cpuN/cache/index*/shared_cpu_list for the L2 and the last level, and the
// node directory it appears under.
type CPUSpec struct {
	CPU      int    `yaml:"cpu" json:"cpu"`
	Package  int    `yaml:"package" json:"package"`
	Core     int    `yaml:"core" json:"core"`
	Siblings string `yaml:"siblings" json:"siblings"`
	L2       string `yaml:"l2,omitempty" json:"l2,omitempty"`
	LLC      string `yaml:"llc" json:"llc"`
	Node     int    `yaml:"node" json:"node"`
}

// CacheSpec gives the cache geometry. Sizes are per instance (per core for
// L1/L2, per LLC domain for L3); L3KiB is 0 when there is no L3.
type CacheSpec struct {
	LineBytes int `yaml:"line_bytes" json:"line_bytes"`
	L1dKiB    int `yaml:"l1d_kib" json:"l1d_kib"`
	L2KiB     int `yaml:"l2_kib" json:"l2_kib"`
	L3KiB     int `yaml:"l3_kib" json:"l3_kib"`
	// LLCInclusion says whether the LLC keeps a copy of every line the
	// cores' private caches hold: "inclusive" (Intel before Skylake-SP),
	// or "non-inclusive" (Skylake-SP and later Xeons, AMD Zen's victim
	// L3). Empty: inclusive. Descriptive: the pricing serves the readers
	// of a Shared line in parallel under both (Replayer.serve), since a
	// non-inclusive LLC keeps the lines several cores share.
	LLCInclusion string `yaml:"llc_inclusion,omitempty" json:"llc_inclusion,omitempty"`
}

// LLC inclusion policies (CacheSpec.LLCInclusion).
const (
	LLCInclusive    = "inclusive"
	LLCNonInclusive = "non-inclusive"
)

// Sourced is a number with the evidence it comes from, so a reader of the
// preset (or of `emu topo -json`) can judge it. Tags follow
// reference/hardware.md: [V] verified, [D] derived from raw data,
// [M] measured, [E] estimate, [C] calibrated on this host.
type Sourced struct {
	Value  float64 `yaml:"value" json:"value"`
	Source string  `yaml:"source" json:"source"`
}

// LatencySpec holds the coherence fabric's costs in ns. The per-class
// numbers are one-way cache-line transfer latencies (CAS ping-pong RTT/2);
// a class that the topology has must be given, one it lacks may be omitted.
type LatencySpec struct {
	SMT    *Sourced `yaml:"smt,omitempty" json:"smt,omitempty"`
	L2     *Sourced `yaml:"l2,omitempty" json:"l2,omitempty"`
	LLC    *Sourced `yaml:"llc,omitempty" json:"llc,omitempty"`
	Socket *Sourced `yaml:"socket,omitempty" json:"socket,omitempty"`
	Remote *Sourced `yaml:"remote,omitempty" json:"remote,omitempty"`
	// HomeRemote is added to a transfer when the line's home node is on
	// another socket than the requester (the directory/home agent lookup
	// crosses the link; hardware.md C2).
	HomeRemote *Sourced `yaml:"home_remote,omitempty" json:"home_remote,omitempty"`
	// MemLocal/MemRemote: a fill from DRAM on the requester's socket / the
	// other socket, when no cache holds the line.
	MemLocal  *Sourced `yaml:"mem_local" json:"mem_local"`
	MemRemote *Sourced `yaml:"mem_remote,omitempty" json:"mem_remote,omitempty"`
	// RMWLocal is an uncontended locked RMW on a line the core owns.
	RMWLocal *Sourced `yaml:"rmw_local" json:"rmw_local"`
	// Burst is how many RMWs a core that holds a contended line retires
	// before the line moves on (hardware.md C2: throughput is not
	// 1/latency). A count, not ns.
	Burst *Sourced `yaml:"burst" json:"burst"`
	// MLP is how many independent load misses a core keeps in flight
	// (its L1D fill buffers), and OOOWindow how far in ns of the core's
	// own execution it runs past the oldest one before the reorder
	// buffer is full: scans over other CPUs' runqueues overlap their
	// misses. Both optional: without them every access blocks (MLP 1).
	MLP       *Sourced `yaml:"mlp,omitempty" json:"mlp,omitempty"`
	OOOWindow *Sourced `yaml:"ooo_window,omitempty" json:"ooo_window,omitempty"`
	// StoreBuffer is how many stores a core's store buffer holds (x86's
	// TSO: a store that misses retires into it and the core goes on; a
	// locked instruction drains it), shared out among the core's hardware
	// threads. Optional: without it every store blocks, as a load does.
	StoreBuffer *Sourced `yaml:"store_buffer,omitempty" json:"store_buffer,omitempty"`
	// SMTYield is a hardware thread's speed while its SMT sibling runs,
	// as a fraction of its speed alone (the two share the core's
	// execution resources). Optional: without it, 1.
	SMTYield *Sourced `yaml:"smt_yield,omitempty" json:"smt_yield,omitempty"`
	// L2Hit and LLCHit are the load-to-use latencies of a hit in the
	// core's L2 and in the LLC, beyond an L1 hit: what a line the CPU
	// holds costs once its own traffic has aged it out of the smaller
	// levels (capacity.go). Optional: without l2_hit, lines never age;
	// with it, llc_hit is required where there is an L3.
	L2Hit  *Sourced `yaml:"l2_hit,omitempty" json:"l2_hit,omitempty"`
	LLCHit *Sourced `yaml:"llc_hit,omitempty" json:"llc_hit,omitempty"`
}

// CostSpec holds base costs of kernel operations in cycles, exclusive of
// any shared-line traffic (which only the coherence model prices). Every
// entry is required and carries its source or rationale.
type CostSpec struct {
	Schedule      *Sourced `yaml:"schedule" json:"schedule"`                 // __schedule() incl. context_switch(), without the class hooks
	PickNext      *Sourced `yaml:"pick_next" json:"pick_next"`               // pick_next_task_fair() + set_next_entity() + put_prev_entity()
	Enqueue       *Sourced `yaml:"enqueue" json:"enqueue"`                   // enqueue_task_fair() per level, without PELT
	Dequeue       *Sourced `yaml:"dequeue" json:"dequeue"`                   // dequeue_task_fair() per level, without PELT
	UpdateCurr    *Sourced `yaml:"update_curr" json:"update_curr"`           // update_curr()
	UpdateLoadAvg *Sourced `yaml:"update_load_avg" json:"update_load_avg"`   // update_load_avg() local arithmetic
	CfsGroup      *Sourced `yaml:"update_cfs_group" json:"update_cfs_group"` // update_cfs_group() local part (calc_group_shares arithmetic)
	Reweight      *Sourced `yaml:"reweight" json:"reweight"`                 // reweight_entity()
	TTWU          *Sourced `yaml:"ttwu" json:"ttwu"`                         // try_to_wake_up() without select/enqueue
	SelectRQ      *Sourced `yaml:"select_rq" json:"select_rq"`               // select_task_rq_fair() fixed part
	SISProbe      *Sourced `yaml:"sis_probe" json:"sis_probe"`               // one idle_cpu() probe in select_idle_cpu(), local part
	IPISend       *Sourced `yaml:"ipi_send" json:"ipi_send"`                 // send_call_function_single_ipi() / x2APIC ICR write
	IPIDeliver    *Sourced `yaml:"ipi_deliver" json:"ipi_deliver"`           // wire + wake of the target (the lookahead)
	IPIRecv       *Sourced `yaml:"ipi_recv" json:"ipi_recv"`                 // IRQ entry, handler dispatch, exit on the target
	IdleExit      *Sourced `yaml:"idle_exit" json:"idle_exit"`               // leaving the idle loop (poll or shallow C-state)
	Tick          *Sourced `yaml:"tick" json:"tick"`                         // sched_tick() fixed part
	BalanceRQ     *Sourced `yaml:"balance_rq" json:"balance_rq"`             // per-rq statistics in update_sg_lb_stats(), local part
	Migrate       *Sourced `yaml:"migrate" json:"migrate"`                   // detach_task()+attach_task() / set_task_cpu() fixed part
	Syscall       *Sourced `yaml:"syscall" json:"syscall"`                   // syscall entry+exit
	PipeWrite     *Sourced `yaml:"pipe_write" json:"pipe_write"`             // pipe_write() body, small message
	PipeRead      *Sourced `yaml:"pipe_read" json:"pipe_read"`               // pipe_read() body, small message
	SockSend      *Sourced `yaml:"sock_send" json:"sock_send"`               // UDP/TCP send path without the wakeup
	SockRecv      *Sourced `yaml:"sock_recv" json:"sock_recv"`               // UDP/TCP receive path
	Uclamp        *Sourced `yaml:"uclamp" json:"uclamp"`                     // uclamp_rq_inc() or uclamp_rq_dec() for both clamp ids, local part
	// SwitchMM is context_switch()'s switch_mm_irqs_off() to another
	// process's address space (CR3 / TTBR0 write and the TLB and cache
	// refill it causes); threads of one process and idle (lazy TLB) do
	// not pay it. Optional: 0 when left out.
	SwitchMM *Sourced `yaml:"switch_mm,omitempty" json:"switch_mm,omitempty"`
	// PageFault is one user page fault of a freshly forked child on
	// memory it shares copy-on-write with its parent: the exception,
	// do_user_addr_fault() -> handle_mm_fault() -> do_wp_page() ->
	// wp_page_copy() (allocate, copy 4 KiB, install the PTE). Optional:
	// 0 when left out.
	PageFault *Sourced `yaml:"page_fault,omitempty" json:"page_fault,omitempty"`
	// ExitMMAP is do_exit() -> exit_mm() -> mmput() -> exit_mmap() of a
	// process whose last thread exits: unmapping a small tool's address
	// space, freeing its page tables and the pages it made private.
	// Optional: 0 when left out.
	ExitMMAP *Sourced `yaml:"exit_mmap,omitempty" json:"exit_mmap,omitempty"`
	// UnixSend and UnixRecv are an AF_UNIX stream socket's
	// unix_stream_sendmsg() (skb allocation, copy-in, the peer's
	// receive-queue lock, queueing, sk_data_ready() without the ttwu) and
	// unix_stream_recvmsg() (the iolock mutex, copy-out, consume_skb()
	// with sock_wfree()/unix_write_space() without the ttwu), small
	// message: hackbench's and perf bench sched messaging's sockets.
	// Optional: sock_send and sock_recv's costs when left out.
	UnixSend *Sourced `yaml:"unix_send,omitempty" json:"unix_send,omitempty"`
	UnixRecv *Sourced `yaml:"unix_recv,omitempty" json:"unix_recv,omitempty"`
	// HrtimerIRQ is the local timer interrupt that expires a sleeper's
	// hrtimer: IRQ entry and exit, hrtimer_interrupt()'s base lock and
	// clock read, __hrtimer_run_queues() removing the timer, and
	// tick_program_event() reprogramming the clock event device (x86:
	// the TSC-deadline MSR write), without the wakeup itself.
	// HrtimerStart is hrtimer_start_range_ns() arming a sleep
	// (nanosleep(), usleep()): the base lock, the timerqueue insert and,
	// when the timer is the earliest, the reprogramming. Both optional:
	// 0 when left out.
	HrtimerIRQ   *Sourced `yaml:"hrtimer_irq,omitempty" json:"hrtimer_irq,omitempty"`
	HrtimerStart *Sourced `yaml:"hrtimer_start,omitempty" json:"hrtimer_start,omitempty"`
}

// DecodeSpec reads a spec strictly: unknown fields, trailing documents
// and type mismatches are errors that name the field.
func DecodeSpec(r io.Reader) (*Spec, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxSpecBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSpecBytes {
		return nil, &SpecError{Field: "(document)", Msg: fmt.Sprintf("longer than %d MiB", maxSpecBytes>>20)}
	}
	if err := checkYAMLBounds(data, specBounds); err != nil {
		return nil, &SpecError{Field: "(document)", Msg: err.Error()}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Spec
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &SpecError{Field: "(document)", Msg: "empty spec"}
		}
		field := fieldAtErrorLine(data, err)
		if field == "" {
			// The offending node has no field name (a mapping key
			// that is itself a sequence or a mapping).
			field = "(document)"
		}
		return nil, &SpecError{Field: field, Msg: cleanYAMLError(err)}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err == nil {
		if err := checkWholeNumbers(&root, reflect.TypeOf(s), ""); err != nil {
			return nil, err
		}
	}
	// Nothing may follow the document: not another one, and not
	// trailing text (the parser stops after a JSON spec's closing brace).
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, &SpecError{Field: "(document)", Msg: "more than one YAML document"}
	case !errors.Is(err, io.EOF):
		return nil, &SpecError{Field: "(document)", Msg: "text after the end of the document: " + cleanYAMLError(err)}
	}
	return &s, nil
}

// maxSpecBytes bounds a spec file (an explicit 384-CPU list is ~40 KiB).
const maxSpecBytes = 16 << 20

// LoadSpecFile reads a spec file.
func LoadSpecFile(path string) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := DecodeSpec(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Encode writes the spec as YAML.
func (s *Spec) Encode(w io.Writer) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(s); err != nil {
		return err
	}
	return enc.Close()
}

// SpecError is a problem with a spec, naming the offending field in the
// spec's own syntax (e.g. "cpus[3].siblings", "numa_distance").
type SpecError struct {
	Field string
	Msg   string
}

func (e *SpecError) Error() string { return e.Field + ": " + e.Msg }

func specErr(field, format string, args ...any) error {
	return &SpecError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// fieldAtErrorLine finds the spec field that a decoding error's "line N"
// points at, as a path like "latency_ns.llc.value", so type mismatches
// name the field as unknown fields do. Several fields can share the line
// (a flow mapping, {value: 8, source: ...}): the error's unknown field
// name, or the kind or text of the value it could not decode, picks one.
func fieldAtErrorLine(data []byte, err error) string {
	msg := err.Error()
	m := regexp.MustCompile(`line (\d+): (.*)`).FindStringSubmatch(msg)
	if m == nil {
		return "(document)"
	}
	line, _ := strconv.Atoi(m[1])
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return "(document)"
	}
	var cands []fieldAt
	nodePaths(&root, line, "", &cands)
	if len(cands) == 0 {
		return "(document)"
	}
	what := m[2]
	if f := regexp.MustCompile(`^field (\S+) not found`).FindStringSubmatch(what); f != nil {
		for _, c := range cands {
			if c.key.Value == f[1] {
				return c.path
			}
		}
	}
	if u := regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `([^`]*)`)?").FindStringSubmatch(what); u != nil {
		for _, c := range cands {
			v := c.val
			switch {
			case u[1] == "seq" && v.Kind == yaml.SequenceNode,
				u[1] == "map" && v.Kind == yaml.MappingNode,
				u[2] != "" && v.Kind == yaml.ScalarNode && (v.Value == u[2] || strings.HasPrefix(v.Value, strings.TrimSuffix(u[2], "..."))):
				return c.path
			}
		}
	}
	return cands[0].path
}

// fieldAt is a key on the error's line, with its value and path.
type fieldAt struct {
	path     string
	key, val *yaml.Node
}

// nodePaths lists the fields whose key is on line, innermost first in
// document order.
func nodePaths(n *yaml.Node, line int, prefix string, out *[]fieldAt) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			nodePaths(c, line, prefix, out)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			name := k.Value
			if prefix != "" {
				name = prefix + "." + k.Value
			}
			nodePaths(v, line, name, out)
			if k.Line == line && (v.Kind == yaml.ScalarNode || v.Line == line) {
				*out = append(*out, fieldAt{name, k, v})
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			nodePaths(c, line, fmt.Sprintf("%s[%d]", prefix, i), out)
		}
	}
}

// cleanYAMLError drops the library's "yaml: " prefix; its messages already
// give the line and the unknown field ("line 7: field l3_shared_by not
// found in type hwmodel.CacheSpec").
// At most maxErrorLines of its errors are kept, then their count.
func cleanYAMLError(err error) string {
	msg := err.Error()
	for _, p := range []string{"yaml: unmarshal errors:\n  ", "yaml: "} {
		if len(msg) > len(p) && msg[:len(p)] == p {
			msg = msg[len(p):]
		}
	}
	if lines := strings.Split(msg, "\n"); len(lines) > maxErrorLines {
		msg = strings.Join(lines[:maxErrorLines], "\n") + fmt.Sprintf("\n  (and %d more errors)", len(lines)-maxErrorLines)
	}
	return msg
}

// maxErrorLines bounds the decoding errors printed for one document.
const maxErrorLines = 5
