package weave

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// sbScenario is CPU b's stream against lines CPU a owns (Modified), on
// spr-2s with a and b on different sockets.
type sbScenario struct {
	name    string
	nlines  int
	stream  func(lines int) []Req // b's requests; Tag is the request's index
	wantTag func(t *testing.T, m *hwmodel.Machine, byTag map[int32]int64, transfer int64)
}

const sbA, sbB = 56, 0 // spr-2s: CPU 56 on socket 1, CPU 0 on socket 0

func sbLines(m *hwmodel.Machine, n int) []*hwmodel.Line {
	lines := make([]*hwmodel.Line, n)
	for i := range lines {
		lines[i] = m.NewLine(1)
		m.Access(lines[i], sbA, hwmodel.Write)
	}
	return lines
}

func sbStores(n int, from int32) []Req {
	var s []Req
	for i := range n {
		s = append(s, Req{T: 0, Line: int32(i), Op: hwmodel.Write, Tag: from + int32(i)})
	}
	return s
}

// TestStoreBuffer: on x86 a store that misses retires into the store
// buffer and the core goes on; it stalls at a locked instruction, which
// drains the buffer, or when the buffer is full. The stores' RFOs go out
// together, so a drain costs about one transfer, not one per store.
func TestStoreBuffer(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	perThread := int(sbCap(m, sbB))
	if perThread != m.Lat.StoreBuffer/2 || perThread < 8 {
		t.Fatalf("CPU %d's share of the store buffer %d, want half of %d", sbB, perThread, m.Lat.StoreBuffer)
	}
	for _, tc := range []sbScenario{
		{
			name: "stores then a locked op", nlines: 9,
			stream: func(int) []Req {
				return append(sbStores(8, 0), Req{T: 0, Line: 8, Op: hwmodel.RMW, Tag: 8})
			},
			wantTag: func(t *testing.T, m *hwmodel.Machine, byTag map[int32]int64, transfer int64) {
				for tag := range int32(8) {
					if byTag[tag] != 0 {
						t.Errorf("store %d stalls %d ps, want 0 (it retires into the buffer)", tag, byTag[tag])
					}
				}
				// The RMW waits for the last RFO (about one transfer),
				// then pays its own transfer.
				if got := byTag[8]; got < 2*transfer-transfer/4 || got > 3*transfer {
					t.Errorf("the RMW stalls %d ps, want about two transfers (%d ps): the drain overlaps the 8 RFOs", got, 2*transfer)
				}
			},
		},
		{
			name: "a full buffer stalls the next store", nlines: perThread + 3,
			stream: func(n int) []Req { return sbStores(n, 0) },
			wantTag: func(t *testing.T, m *hwmodel.Machine, byTag map[int32]int64, transfer int64) {
				for tag := range int32(perThread) {
					if byTag[tag] != 0 {
						t.Errorf("store %d stalls %d ps, want 0 (the buffer has room)", tag, byTag[tag])
					}
				}
				if got := byTag[int32(perThread)]; got < transfer/2 {
					t.Errorf("store %d (the buffer full) stalls %d ps, want about a transfer (%d ps)", perThread, got, transfer)
				}
			},
		},
		{
			name: "a load after a store to its line is forwarded", nlines: 2,
			stream: func(int) []Req {
				return []Req{{T: 0, Line: 0, Op: hwmodel.Write, Tag: 0}, {T: 1, Line: 0, Op: hwmodel.Read, Tag: 1},
					{T: 2, Line: 1, Op: hwmodel.Read, Tag: 2}}
			},
			wantTag: func(t *testing.T, m *hwmodel.Machine, byTag map[int32]int64, transfer int64) {
				if byTag[0] != 0 || byTag[1] != 0 {
					t.Errorf("store %d ps, load of its line %d ps, want 0 and 0 (forwarded)", byTag[0], byTag[1])
				}
				// A load of another line passes the store (TSO): one
				// transfer.
				if got := byTag[2]; got < transfer-transfer/4 || got > transfer+transfer/4 {
					t.Errorf("the load of another line stalls %d ps, want one transfer (%d ps)", got, transfer)
				}
			},
		},
		{
			name: "a locked Unlock drains, a plain one does not", nlines: 3,
			stream: func(int) []Req {
				return []Req{{T: 0, Line: 2, Op: hwmodel.Lock, Tag: 0}, {T: 0, Line: 0, Op: hwmodel.Write, Tag: 1},
					{T: 0, Line: 2, Op: hwmodel.Unlock, Locked: true, Tag: 2},
					{T: 1000, Line: 2, Op: hwmodel.Lock, Tag: 3}, {T: 1000, Line: 1, Op: hwmodel.Write, Tag: 4},
					{T: 1000, Line: 2, Op: hwmodel.Unlock, Tag: 5}}
			},
			wantTag: func(t *testing.T, m *hwmodel.Machine, byTag map[int32]int64, transfer int64) {
				if got := byTag[2]; got < transfer-transfer/4 {
					t.Errorf("mutex_unlock()'s cmpxchg stalls %d ps, want at least the store's transfer (%d ps)", got, transfer)
				}
				if byTag[4] != 0 || byTag[5] != 0 {
					t.Errorf("spin_unlock()'s store and the store before it stall %d and %d ps, want 0", byTag[4], byTag[5])
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := sbLines(m, tc.nlines)
			oracle := m.NewLine(1)
			m.Access(oracle, sbA, hwmodel.Write)
			cost := m.Access(oracle, sbB, hwmodel.Write)
			if cost.Kind != hwmodel.Transfer {
				t.Fatalf("a store of CPU %d to CPU %d's line: %+v, want a transfer", sbB, sbA, cost)
			}
			transfer := hwmodel.PS(cost.NS)
			streams := make([][]Req, m.NumCPUs())
			streams[sbB] = tc.stream(tc.nlines)
			res := Replay(m, lines, streams)
			byTag := map[int32]int64{}
			for _, x := range res.Served[sbB] {
				byTag[x.Tag] += x.StallPS
			}
			tc.wantTag(t, m, byTag, transfer)
			// The other CPU still sees every store: its lines moved.
			for _, q := range streams[sbB] {
				if q.Op == hwmodel.Write && lines[q.Line].Owner() != sbB {
					t.Errorf("line %d owned by %d after the stores, want %d", q.Line, lines[q.Line].Owner(), sbB)
				}
			}
		})
	}
}

// TestStoreBufferSameTraffic: the store buffer changes only the issuing
// CPU's stall. A store-only stream moves the same lines, for the same busy
// time, as without a buffer; and a reader on the owner's side still waits
// for the stores' transfers.
func TestStoreBufferSameTraffic(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	off := *m
	off.Lat.StoreBuffer = 0
	run := func(m *hwmodel.Machine, reader bool) *ReplayResult {
		lines := sbLines(m, 6)
		streams := make([][]Req, m.NumCPUs())
		streams[sbB] = sbStores(6, 0)
		if reader {
			// CPU a reads the lines back at once: it waits for them.
			for i := range 6 {
				streams[sbA] = append(streams[sbA], Req{T: 5, Line: int32(i), Op: hwmodel.Read, Tag: 10 + int32(i)})
			}
		}
		return Replay(m, lines, streams)
	}
	with, without := run(m, false), run(&off, false)
	for li := range with.Lines {
		if with.Lines[li].Transfers != without.Lines[li].Transfers || with.Lines[li].BusyPS != without.Lines[li].BusyPS {
			t.Errorf("line %d: transfers %v busy %d ps with the buffer, %v %d ps without", li,
				with.Lines[li].Transfers, with.Lines[li].BusyPS, without.Lines[li].Transfers, without.Lines[li].BusyPS)
		}
	}
	if with.CPUStall[sbB] != 0 || without.CPUStall[sbB] == 0 {
		t.Errorf("the storer stalls %.1f ns with the buffer, %.1f without; want 0 and more", with.CPUStall[sbB], without.CPUStall[sbB])
	}
	if r := run(m, true); r.CPUStall[sbA] == 0 {
		t.Errorf("the reader on the owner's side does not stall: the stores' transfers are not seen")
	}
}

// TestStoreBufferReleaseOrder: a plain release (spin_unlock()'s store)
// reaches the lock line only after the stores before it: a CPU that takes
// the lock next gets it no earlier than those stores complete.
func TestStoreBufferReleaseOrder(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	lines := sbLines(m, 2) // line 0 data (CPU a's), line 1 the lock
	m.Access(lines[1], sbB, hwmodel.Write)
	streams := make([][]Req, m.NumCPUs())
	streams[sbB] = []Req{{T: 0, Line: 1, Op: hwmodel.Lock}, {T: 0, Line: 0, Op: hwmodel.Write},
		{T: 0, Line: 1, Op: hwmodel.Unlock, Notify: true}}
	res := Replay(m, lines, streams)
	oracle := m.NewLine(1)
	m.Access(oracle, sbA, hwmodel.Write)
	transfer := m.Access(oracle, sbB, hwmodel.Write).NS
	if len(res.Notices) != 1 || float64(res.Notices[0].T) < transfer {
		t.Fatalf("the release is seen at %+v, want after the data store's transfer (%.0f ns)", res.Notices, transfer)
	}
	if res.CPUStall[sbB] != 0 {
		t.Errorf("CPU %d stalls %.1f ns, want 0: neither store blocks it", sbB, res.CPUStall[sbB])
	}
}

// TestMarkLocked: MarkLocked marks a Write or Unlock; on another op or an
// empty Log it panics.
func TestMarkLocked(t *testing.T) {
	for _, tc := range []struct {
		op        hwmodel.Op
		empty, ok bool
	}{
		{hwmodel.Write, false, true}, {hwmodel.Unlock, false, true},
		{hwmodel.Read, false, false}, {hwmodel.RMW, false, false}, {hwmodel.Write, true, false},
	} {
		l := NewLog(3)
		if !tc.empty {
			l.Record(1, 0, tc.op, 0)
		}
		func() {
			defer func() {
				if r := recover(); (r == nil) != tc.ok {
					t.Errorf("%v (empty %v): panic %v, want ok %v", tc.op, tc.empty, r, tc.ok)
				}
			}()
			l.MarkLocked()
		}()
		if tc.ok && !l.Entries()[0].Locked() {
			t.Errorf("%v: not Locked after MarkLocked", tc.op)
		}
		s := NewLog(4)
		if tc.ok {
			s.Append(2, l.Entries()[0])
			if !s.Entries()[0].Locked() {
				t.Errorf("%v: Append drops the Locked mark", tc.op)
			}
		}
	}
}

// TestStoreBufferForwardsPending: a load of a line whose store still waits
// in the buffer (its line busy with another CPU's RMW) is served from the
// buffer at once; a load of the line without a buffered store waits.
func TestStoreBufferForwardsPending(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	const c = 60 // socket 1, beside the owner: it takes the line first
	for _, store := range []bool{true, false} {
		lines := sbLines(m, 1)
		streams := make([][]Req, m.NumCPUs())
		streams[c] = []Req{{T: 0, Op: hwmodel.RMW}}
		if store {
			streams[sbB] = []Req{{T: 1, Op: hwmodel.Write, Tag: 0}}
		}
		streams[sbB] = append(streams[sbB], Req{T: 2, Op: hwmodel.Read, Tag: 1})
		res := Replay(m, lines, streams)
		var load int64
		for _, x := range res.Served[sbB] {
			if x.Tag == 1 {
				load += x.StallPS
			}
		}
		if store && load != 0 {
			t.Errorf("the load after a buffered store to its line stalls %d ps, want 0 (forwarded)", load)
		}
		if !store && load == 0 {
			t.Errorf("the load of a line busy with another CPU's RMW does not stall: the scenario does not test forwarding")
		}
	}
}
