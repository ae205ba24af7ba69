package emu

import (
	"bytes"
	"encoding/binary"
	"regexp"
	"strings"
	"testing"
)

var ftraceRe = regexp.MustCompile(`^\s*(.+)-(\d+)\s+\[(\d+)\] (\S{5})\s+(\d+\.\d{6}): (\w+): (.*)$`)

// checkTraceChain parses ftrace text and checks, per CPU, that every
// sched_switch's prev is the task switched in last and that every event
// is logged in the context of the task running there. It returns the
// event counts.
func checkTraceChain(t *testing.T, text string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	last := map[string]string{} // CPU -> pid switched in last
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		m := ftraceRe.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unparsed line %q", line)
		}
		pid, cpu, ev := m[2], m[3], m[6]
		counts[ev]++
		if c, ok := last[cpu]; ok && c != pid {
			t.Errorf("%q: logged in pid %s's context, CPU %s runs %s", line, pid, cpu, c)
		}
		if ev == "sched_switch" {
			f := map[string]string{}
			for _, kv := range strings.Fields(m[7]) {
				if k, v, ok := strings.Cut(kv, "="); ok {
					f[k] = v
				}
			}
			if f["prev_pid"] != pid {
				t.Errorf("%q: prev is not the context", line)
			}
			last[cpu] = f["next_pid"]
		}
	}
	return counts
}

// The trace of a run with active balancing: the stopper's switches keep
// every CPU's switch chain whole.
func TestTraceActiveBalanceChain(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	s.EnableTrace(1000*ms, 0)
	periodicPair(t, s)
	s.Run(1000 * ms)
	var b bytes.Buffer
	if err := s.WriteFtrace(&b); err != nil {
		t.Fatal(err)
	}
	counts := checkTraceChain(t, b.String())
	if !strings.Contains(b.String(), "next_comm=migration/") {
		t.Error("no active balance in the trace: the test no longer covers the stopper's switches")
	}
	if counts["sched_waking"] != counts["sched_wakeup"] || counts["sched_waking"] == 0 {
		t.Errorf("wakings %d, wakeups %d", counts["sched_waking"], counts["sched_wakeup"])
	}
}

// The trace.dat holds the text trace's events: a reader of its own
// (header sections, flyrecord offsets, ring-buffer pages) decodes the
// same number of records per CPU with the right event IDs.
func TestTraceDatLayout(t *testing.T) {
	s := traceSim(t, "serial")
	var txt, dat bytes.Buffer
	if err := s.WriteFtrace(&txt); err != nil {
		t.Fatal(err)
	}
	checkTraceChain(t, txt.String())
	if err := s.WriteTraceDat(&dat); err != nil {
		t.Fatal(err)
	}
	b := dat.Bytes()
	le := binary.LittleEndian
	if !bytes.HasPrefix(b, []byte("\x17\x08\x44tracing6\x00\x00\x08")) || le.Uint32(b[14:]) != datPageSize {
		t.Fatalf("bad initial format: %q", b[:16])
	}
	fly := bytes.Index(b, []byte("flyrecord\x00"))
	if fly < 0 || !bytes.Contains(b[:fly], []byte("name: sched_waking\nID: 309\n")) || !bytes.Contains(b[:fly], []byte("header_page\x00")) {
		t.Fatal("header sections missing")
	}
	// The options section (trace-cmd's "No tracing clock saved" without
	// TRACECLOCK), then the flyrecord offsets and the v6 clock after them.
	opts := bytes.Index(b, []byte("options  \x00"))
	if opts < 0 || opts > fly {
		t.Fatal("no options section before flyrecord")
	}
	ncpu := int(le.Uint32(b[opts-4:]))
	if ncpu != len(s.cpus) {
		t.Fatalf("%d CPUs in the file, %d modeled", ncpu, len(s.cpus))
	}
	got := map[uint16]string{}
	for q := opts + 10; ; {
		id := le.Uint16(b[q:])
		if id == 0 {
			if q+2 != fly {
				t.Fatalf("options end at %d, flyrecord at %d", q+2, fly)
			}
			break
		}
		n := int(le.Uint32(b[q+2:]))
		got[id] = string(b[q+6 : q+6+n])
		q += 6 + n
	}
	if c := got[datOptTraceClock]; !strings.HasPrefix(c, "[local] global") {
		t.Errorf("TRACECLOCK option %q", c)
	}
	if u := got[datOptUname]; u != "Linux hikey-8 6.6.0 aarch64\x00" {
		t.Errorf("UNAME option %q", u)
	}
	clk := fly + 10 + 16*ncpu
	if n := int(le.Uint64(b[clk:])); string(b[clk+8:clk+8+n]) != "[local]" {
		t.Errorf("clock after the CPU offsets: %q", b[clk+8:clk+8+n])
	}
	ids := map[uint16]bool{}
	for _, e := range s.datEventList() {
		ids[uint16(e.id)] = true
	}
	for cpu := 0; cpu < ncpu; cpu++ {
		off := int(le.Uint64(b[fly+10+16*cpu:]))
		size := int(le.Uint64(b[fly+18+16*cpu:]))
		if off%datPageSize != 0 || size%datPageSize != 0 || off+size > len(b) {
			t.Fatalf("CPU %d: data at %d size %d", cpu, off, size)
		}
		n := 0
		var ts int64
		for p := off; p < off+size; p += datPageSize {
			pts := int64(le.Uint64(b[p:]))
			if pts < ts {
				t.Errorf("CPU %d: page at %d goes back in time", cpu, p)
			}
			ts = pts
			commit := int(le.Uint64(b[p+8:]))
			for q := p + datPageHdr; q < p+datPageHdr+commit; {
				h := le.Uint32(b[q:])
				tl, delta := h&31, int64(h>>5)
				switch {
				case tl == rbTypeTimeExtend:
					ts += delta | int64(le.Uint32(b[q+4:]))<<rbDeltaBits
					q += 8
					continue
				case tl == 0 || tl > rbTypeDataMax:
					t.Fatalf("CPU %d: unexpected type_len %d", cpu, tl)
				}
				ts += delta
				if id := le.Uint16(b[q+4:]); !ids[id] {
					t.Fatalf("CPU %d: event id %d", cpu, id)
				}
				n++
				q += 4 + 4*int(tl)
			}
		}
		if want := len(s.traceRecords(cpu)); n != want {
			t.Errorf("CPU %d: %d records in the file, %d traced", cpu, n, want)
		}
	}
}
