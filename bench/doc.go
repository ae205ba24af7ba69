// Package bench holds the workloads that imitate the real benchmarks a
// scheduler developer runs (hackbench and perf bench sched messaging,
// perf bench sched pipe, schbench, netperf, a sysbench-OLTP-like load, a
// migration-stress hopper, and rt-app-style JSON descriptions), and the Go
// benchmarks of the engine.
//
// A workload builds tasks whose programs (emu.Program) compute, make
// syscalls (charged at the preset's costs) and wait on and signal
// semaphores (emu.Sem) the way the real tool's threads block on pipes,
// sockets and futexes. A pipe is two semaphores: its data, owned by the
// reader, and its free space in messages, owned by the writer; a socket's
// receive queue is one. Where several writers share a channel (hackbench's
// senders), they share its room instead (chanRoom): each sees the fill and
// sleeps on a semaphore of its own. Signals carry the sender's clock, so latency is
// measured from the wakeup the kernel would do to the moment the wakee
// runs, as schbench measures it.
//
// Each workload takes the real tool's flags where they exist, prints the
// tool's output format (reference/hardware.md D), and reports its key
// numbers as Metrics for -json and compare. Runs scale by loops or
// duration, never by topology.
package bench
