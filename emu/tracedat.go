package emu

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// The trace-cmd trace.dat file, version 6 (trace-cmd.dat.v6(5)): the
// header a 64-bit little-endian x86 kernel's tracefs would give trace-cmd
// record (events/header_page, events/header_event, the sched events'
// format files, saved_cmdlines), then the flyrecord section with one
// ring-buffer stream per CPU, in the kernel's ring buffer page format
// (kernel/trace/ring_buffer.c, include/linux/ring_buffer.h).

const (
	datPageSize = 4096
	datPageHdr  = 16 // struct buffer_data_page: u64 time_stamp, local_t commit
	datPageData = datPageSize - datPageHdr

	// include/linux/ring_buffer.h: enum ring_buffer_type
	rbTypeDataMax    = 28
	rbTypeTimeExtend = 30
	rbDeltaBits      = 27
)

// datField is one field of an event's format file (and of its record).
type datField struct {
	decl   string // "char prev_comm[16]"
	size   int
	signed bool
}

// datEvent is a sched event's format: ID, fields after the common ones,
// print fmt.
type datEvent struct {
	kind   traceKind
	id     int
	fields []datField
	print  string
}

var datCommon = []datField{
	{"unsigned short common_type", 2, false},
	{"unsigned char common_flags", 1, false},
	{"unsigned char common_preempt_count", 1, false},
	{"int common_pid", 4, true},
}

// The TASK_REPORT mask expression of sched_switch's print fmt
// (include/trace/events/sched.h), as the kernel expands it.
const datReport = "(0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040)"

var datWakeupFields = []datField{{"char comm[16]", 16, false}, {"pid_t pid", 4, true}, {"int prio", 4, true}, {"int target_cpu", 4, true}}

const datWakeupPrint = `"comm=%s pid=%d prio=%d target_cpu=%03d", REC->comm, REC->pid, REC->prio, REC->target_cpu`

// datEvents are the events in the file. The IDs are this file's own
// (every kernel build numbers them differently); readers take them from
// the format files.
var datEvents = []datEvent{
	{trMigrate, 305, []datField{{"char comm[16]", 16, false}, {"pid_t pid", 4, true}, {"int prio", 4, true}, {"int orig_cpu", 4, true}, {"int dest_cpu", 4, true}},
		`"comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d", REC->comm, REC->pid, REC->prio, REC->orig_cpu, REC->dest_cpu`},
	{trSwitch, 306, []datField{{"char prev_comm[16]", 16, false}, {"pid_t prev_pid", 4, true}, {"int prev_prio", 4, true}, {"long prev_state", 8, true},
		{"char next_comm[16]", 16, false}, {"pid_t next_pid", 4, true}, {"int next_prio", 4, true}},
		`"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d", REC->prev_comm, REC->prev_pid, REC->prev_prio, ` +
			`(REC->prev_state & ((((` + datReport + `) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((` + datReport + `) + 1) << 1) - 1), "|", ` +
			`{ 0x00000001, "S" }, { 0x00000002, "D" }, { 0x00000004, "T" }, { 0x00000008, "t" }, { 0x00000010, "X" }, { 0x00000020, "Z" }, { 0x00000040, "P" }, { 0x00000080, "I" }) : "R", ` +
			`REC->prev_state & (((` + datReport + `) + 1) << 1) ? "+" : "", REC->next_comm, REC->next_pid, REC->next_prio`},
	{trWakeupNew, 307, datWakeupFields, datWakeupPrint},
	{trWakeup, 308, datWakeupFields, datWakeupPrint},
	{trWaking, 309, datWakeupFields, datWakeupPrint},
	{trProcessExit, 310, []datField{{"char comm[16]", 16, false}, {"pid_t pid", 4, true}, {"int prio", 4, true}},
		`"comm=%s pid=%d prio=%d", REC->comm, REC->pid, REC->prio`},
	{trStatWait, 311, datStatFields, datStatPrint},
	{trStatSleep, 312, datStatFields, datStatPrint},
	{trFork, 313, []datField{{"char parent_comm[16]", 16, false}, {"pid_t parent_pid", 4, true}, {"char child_comm[16]", 16, false}, {"pid_t child_pid", 4, true}},
		`"comm=%s pid=%d child_comm=%s child_pid=%d", REC->parent_comm, REC->parent_pid, REC->child_comm, REC->child_pid`},
}

// sched_stat_template: the u64 is 8-aligned (offset 32).
var datStatFields = []datField{{"char comm[16]", 16, false}, {"pid_t pid", 4, true}, {"u64 delay", 8, false}}

const datStatPrint = `"comm=%s pid=%d delay=%Lu [ns]", REC->comm, REC->pid, (unsigned long long)REC->delay`

// format is the event's tracefs format file.
func (e *datEvent) format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nID: %d\nformat:\n", e.kind.traceName(), e.id)
	off := 0
	put := func(fs []datField) {
		for _, f := range fs {
			off = datAlign(off, f.size)
			sg := 0
			if f.signed {
				sg = 1
			}
			fmt.Fprintf(&b, "\tfield:%s;\toffset:%d;\tsize:%d;\tsigned:%d;\n", f.decl, off, f.size, sg)
			off += f.size
		}
	}
	put(datCommon)
	b.WriteString("\n")
	put(e.fields)
	fmt.Fprintf(&b, "\nprint fmt: %s\n", e.print)
	return b.String()
}

// datAlign places a field of size n at its natural alignment (a u64 on
// 8 bytes), as the compiler lays out the event's struct.
func datAlign(off, n int) int {
	if n == 8 {
		return (off + 7) &^ 7
	}
	return off
}

// datHeaderPage is events/header_page (ring_buffer_print_page_header()).
func datHeaderPage() string {
	return "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n" +
		"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n" +
		"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n" +
		fmt.Sprintf("\tfield: char data;\toffset:16;\tsize:%d;\tsigned:0;\n", datPageData)
}

// datHeaderEvent is events/header_event (ring_buffer_print_entry_header()).
func datHeaderEvent() string {
	return "# compressed entry header\n" +
		"\ttype_len    :    5 bits\n" +
		"\ttime_delta  :   27 bits\n" +
		"\tarray       :   32 bits\n" +
		"\n" +
		"\tpadding     : type == 29\n" +
		"\ttime_extend : type == 30\n" +
		"\ttime_stamp : type == 31\n" +
		"\tdata max type_len  == 28\n"
}

// datPayload is the record of r in CPU cpu's buffer: struct trace_entry
// then the event's fields.
func datPayload(b []byte, e *datEvent, r *traceRec, cpu int) []byte {
	le := binary.LittleEndian
	_, ctxPID, _ := r.ctx.who(cpu)
	b = le.AppendUint16(b, uint16(e.id))
	b = append(b, r.flags, r.pc)
	b = le.AppendUint32(b, uint32(int32(ctxPID)))
	comm := func(s string) {
		var c [16]byte
		copy(c[:], s) // TASK_COMM_LEN, NUL-terminated
		b = append(b, c[:]...)
	}
	i32 := func(v int) { b = le.AppendUint32(b, uint32(int32(v))) }
	switch r.kind {
	case trFork:
		pc, pp, _ := r.ctx.who(cpu)
		comm(pc)
		i32(pp)
		comm(taskComm(r.task))
		i32(r.task.PID)
	case trStatRuntime, trProcessFree:
		b = procPayload(b, r)
	case trProcessExit:
		comm(taskComm(r.task))
		i32(r.task.PID)
		i32(taskPrio(r.task))
	case trStatWait, trStatSleep:
		comm(taskComm(r.task))
		i32(r.task.PID)
		b = append(b, 0, 0, 0, 0) // to the u64's offset, 32
		b = le.AppendUint64(b, uint64(r.delay))
	case trSwitch:
		pc, pp, pprio := r.ctx.who(cpu)
		nc, np, nprio := r.next.who(cpu)
		comm(pc)
		i32(pp)
		i32(pprio)
		b = le.AppendUint64(b, uint64(r.prevStateReport()))
		comm(nc)
		i32(np)
		i32(nprio)
	default:
		comm(taskComm(r.task))
		i32(r.task.PID)
		i32(taskPrio(r.task))
		i32(r.cpu)
		if r.kind == trMigrate {
			i32(r.dest)
		}
	}
	return b
}

// trace-cmd's option IDs (trace-cmd-private.h: TRACECMD_OPTION_*).
const (
	datOptTraceClock = 4
	datOptUname      = 5
)

// datClock is the kernel's default trace clock, trace_clock_local(): the
// model's virtual nanoseconds stand for it.
const datClock = "local"

// datTraceClock is tracefs' trace_clock file of the modeled kernel
// (kernel/trace/trace.c: trace_clocks[], then ARCH_TRACE_CLOCKS), the
// current one in brackets.
func (s *Sim) datTraceClock() string {
	c := "[" + datClock + "] global counter uptime perf mono mono_raw boot tai"
	if s.m.Arch == "x86_64" {
		c += " x86-tsc"
	}
	return c + " \n"
}

// datUname is trace-cmd record's add_uname(): "sysname nodename release
// machine". Simplified: the nodename is the machine preset's name and the
// release the modeled kernel's version, from its feature set.
func (s *Sim) datUname() string {
	arch := s.m.Arch
	if arch == "arm64" {
		arch = "aarch64" // utsname.machine
	}
	return fmt.Sprintf("Linux %s %s %s", s.m.Name, s.kernelRelease(), arch)
}

// kernelRelease names the modeled kernel version: the release of the
// profile nearest the feature set (procversion.go), as -sched-debug's
// header does.
func (s *Sim) kernelRelease() string { return layoutFor(s.feat).release + ".0" }

// datCPUStream encodes records as ring-buffer pages: each page starts at
// its first event's time; each event carries the delta from the one
// before, with a time-extend event before deltas of 2^27 ns or more.
func datCPUStream(recs []*traceRec, cpu int, byKind map[traceKind]*datEvent) []byte {
	le := binary.LittleEndian
	var out, page []byte
	var pageTS, last int64
	flush := func() {
		if len(page) == 0 {
			return
		}
		out = le.AppendUint64(out, uint64(pageTS))
		out = le.AppendUint64(out, uint64(len(page)))
		out = append(out, page...)
		out = append(out, make([]byte, datPageData-len(page))...)
		page = page[:0]
	}
	var payload []byte
	for _, r := range recs {
		payload = datPayload(payload[:0], byKind[r.kind], r, cpu)
		n := (len(payload) + 3) / 4 // 4-byte words (RB_ALIGNMENT)
		if n > rbTypeDataMax {
			panic("emu: trace record too long for a compressed header")
		}
		delta := r.t - last
		need := 4 + 4*n
		if delta >= 1<<rbDeltaBits {
			need += 8
		}
		if len(page) == 0 || len(page)+need > datPageData {
			flush()
			pageTS, delta = r.t, 0
		}
		if delta >= 1<<rbDeltaBits {
			page = le.AppendUint32(page, rbTypeTimeExtend|uint32(delta&(1<<rbDeltaBits-1))<<5)
			page = le.AppendUint32(page, uint32(delta>>rbDeltaBits))
			delta = 0
		}
		page = le.AppendUint32(page, uint32(n)|uint32(delta)<<5)
		page = append(page, payload...)
		page = append(page, make([]byte, 4*n-len(payload))...)
		last = r.t
	}
	flush()
	return out
}

// WriteTraceDat writes the trace as a trace-cmd trace.dat (version 6),
// which trace-cmd report, KernelShark and Perfetto read.
func (s *Sim) WriteTraceDat(w io.Writer) error {
	le := binary.LittleEndian
	var h bytes.Buffer
	u32 := func(v int) { h.Write(le.AppendUint32(nil, uint32(v))) }
	u64 := func(v int) { h.Write(le.AppendUint64(nil, uint64(v))) }
	h.Write([]byte{0x17, 0x08, 0x44})
	h.WriteString("tracing6\x00")
	h.WriteByte(0) // little endian
	h.WriteByte(8) // long size
	u32(datPageSize)
	hp, he := datHeaderPage(), datHeaderEvent()
	h.WriteString("header_page\x00")
	u64(len(hp))
	h.WriteString(hp)
	h.WriteString("header_event\x00")
	u64(len(he))
	h.WriteString(he)
	u32(0) // ftrace (function tracer) event formats
	u32(1) // event systems
	h.WriteString("sched\x00")
	evs := s.datEventList()
	u32(len(evs))
	byKind := map[traceKind]*datEvent{}
	for i := range evs {
		e := &evs[i]
		byKind[e.kind] = e
		f := e.format()
		u64(len(f))
		h.WriteString(f)
	}
	u32(0) // kallsyms
	u32(0) // printk formats
	// saved_cmdlines: every task, and each CPU's stopper.
	var cmd strings.Builder
	for _, p := range s.parents {
		fmt.Fprintf(&cmd, "%d %s\n", p.PID, p.Comm[:min(len(p.Comm), 15)])
	}
	for _, t := range s.tasks {
		fmt.Fprintf(&cmd, "%d %s\n", t.PID, taskComm(t))
	}
	streams := make([][]byte, len(s.cpus))
	for cpu := range s.cpus {
		fmt.Fprintf(&cmd, "%d migration/%d\n", stopperPID(cpu), cpu)
		streams[cpu] = datCPUStream(s.traceRecords(cpu), cpu, byKind)
	}
	u64(cmd.Len())
	h.WriteString(cmd.String())
	u32(len(s.cpus))
	// Options (trace-cmd record's add_options()): TRACECLOCK with the
	// trace_clock file, UNAME; then DONE.
	clocks, uname := s.datTraceClock(), s.datUname()
	h.WriteString("options  \x00")
	opt := func(id int, v string) {
		h.Write(le.AppendUint16(nil, uint16(id)))
		u32(len(v) + 1)
		h.WriteString(v + "\x00")
	}
	opt(datOptTraceClock, clocks)
	opt(datOptUname, uname)
	h.Write(le.AppendUint16(nil, 0))
	h.WriteString("flyrecord\x00")
	// v6 keeps the selected clock after the CPU offsets (trace-output.c:
	// save_clock(): u64 length, "[local]").
	clock := "[" + datClock + "]"
	off := h.Len() + 16*len(s.cpus) + 8 + len(clock)
	off = (off + datPageSize - 1) / datPageSize * datPageSize
	for _, st := range streams {
		u64(off)
		u64(len(st))
		off += len(st)
	}
	u64(len(clock))
	h.WriteString(clock)
	bw := bufio.NewWriter(w)
	bw.Write(h.Bytes())
	bw.Write(make([]byte, (datPageSize-h.Len()%datPageSize)%datPageSize))
	for _, st := range streams {
		bw.Write(st)
	}
	return bw.Flush()
}
