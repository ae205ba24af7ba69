// Package hwmodel is rqemu's picture of a machine: the topology the
// scheduler sees, the cost of moving a cache line between two CPUs, and the
// base cost of the kernel's scheduling work. It is pure: no goroutines, no
// host access except sysfs and cpuid reads for the "host" preset.
//
// # Topology
//
// A Machine is built from a Spec, a strict YAML file (unknown fields are
// errors) that either gives a regular Layout (sockets of LLCs of cores,
// numbered as Linux numbers x86 CPUs: first threads first, so SMT siblings
// are ncores apart) or lists every CPU as sysfs does (package, core_id,
// thread_siblings_list, the L2 and last-level shared_cpu_list, node). The
// presets under presets/ are such files, embedded; users copy one with
// `emu topo -spec NAME`, edit it and pass it back with -topo FILE. Build
// validates the sharing lists (each must contain its CPU and be identical
// for every member, so a CPU cannot sit in two LLCs, and sibling lists are
// symmetric), the nesting SMT ⊆ L2 ⊆ LLC ⊆ package, and the SLIT, and
// reports every problem as a SpecError naming the field.
//
// # Distance classes and the coherence model
//
// Two CPUs are at one of five distances (Class): SMT siblings, cores behind
// one L2 (a cluster), one LLC, one package but different LLCs (EPYC's
// cross-CCX), or different packages. Each preset gives the one-way line
// transfer latency of each class it has, with the source of the number
// (reference/hardware.md C1): the CAS ping-pong medians of public
// core-to-core matrices where they exist, estimates where they do not.
//
// Line is one cache line's coherence state (owner, sharers, home node), a
// MESI simplification; Machine.Access prices one access against it: free
// on a hit, a transfer at the class latency from the owner or the nearest
// sharer, an invalidation of every other copy (the farthest sets the
// latency), or a DRAM fill at the home node. A transfer whose home node is
// on another socket than the requester pays HomeRemote on top: the
// directory lookup crosses the link, which is why the same atomic costs
// twice as much on the node remote to the task group's allocation
// (hardware.md C2). Replayer is the weave engine built on Access: it
// replays every CPU's timestamped access stream through the lines as a
// discrete-event simulation, so RMWs on one line serialize, locks are
// handed over first come first served, and a core that holds a contended
// line retires up to Burst RMWs before the line moves on. A load that hits
// in the core's own cache completes at issue, and a request that finds its
// line free and unqueued is served at once: only the misses that meet a
// busy line queue, and the home agent draws among them (Advance). That last rule is
// why N writers on one line sustain far more than one RMW per transfer
// latency (hardware.md C2: 193 Mops/s for two writers on a 27 ns
// transfer); a model priced at one transfer per RMW overestimates five-fold.
// Independent loads (a scan over other CPUs' runqueues) overlap: a core
// keeps up to MLP misses in flight and runs OOOWindow ns past the oldest
// before it stalls. On x86 a plain store retires into the store buffer
// (StoreBuffer entries): the core stalls on it only at a locked
// instruction, which drains the buffer, or when the buffer is full. The
// Replayer advances in calls, one per epoch, and
// keeps the machine's queues between them (Advance).
//
// Rejected: a pairwise latency matrix alone (it cannot express the home
// node, serialization or the burst), and a full MESIF/MOESI protocol
// simulation (its extra states change no result the studies compare).
//
// # Costs and calibration
//
// The base costs of kernel operations (schedule, enqueue, ttwu, IPIs,
// syscalls; KernelOp) are per-preset cycle counts with a stated source or
// rationale; shared-line costs come only from the coherence model. The
// "host" preset is detected from sysfs (the sharing map) and cpuid
// (identity, caches, clock); its latencies default to the closest preset's
// until `emu calibrate` measures them. A Calib file applies the
// measurements: transfer latency per class, the uncontended RMW, the burst
// that reproduces the measured two-writer hammer, and one scale on the
// kernel costs that reproduces the measured pipe round trip.
package hwmodel
