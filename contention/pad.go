package contention

import (
	"fmt"
	"github.com/rqemu/rqemu/weave"
	"reflect"
	"unsafe"
)

// Host placement of the shared objects' hot words.
//
// Every object keeps its hot words (the memory its operations touch with
// atomics or under its lock) in a separate allocation that nothing else
// shares, hostLinePad (128) bytes clear of anything else on both sides: 64
// bytes would be one x86 line, but the L2 adjacent-line prefetcher fetches
// lines in aligned 128-byte pairs, so two hot words 64 bytes apart still
// interfere (see hostLinePad in probe.go). The object's own struct (line ids,
// name, pointers to the hot words) is read-only after setup and lives
// elsewhere, so a store to a hot word never invalidates what the other CPUs
// read to find it.
//
// Pointer-free hot structs go through alignedHot, which also aligns them to
// 128 bytes, so a struct that mirrors a kernel layout spanning two 64-byte
// lines (rq->uclamp) spans the same two host lines. A hot struct holding Go
// pointers (the wake list's head) uses padded, which pads but cannot align.
//
// A Pack overrides all this on purpose: its members are packed contiguously
// (false sharing), for experiments and the false-shared benchmarks.

// padded is a T with hostLinePad bytes of padding on each side.
type padded[T any] struct {
	_ [hostLinePad]byte
	v T
	_ [hostLinePad]byte
}

// alignedHot returns a zeroed T at a hostLinePad-aligned address, with at
// least hostLinePad bytes of memory nothing else uses before and after it.
// T must hold no Go pointers: its memory is a []uint64, which the garbage
// collector does not scan (alignedHot panics otherwise). Its alignment must
// not exceed 8.
func alignedHot[T any]() *T {
	typ := reflect.TypeFor[T]()
	if hasPointers(typ) {
		panic(fmt.Sprintf("contention: alignedHot[%v]: the type holds pointers", typ))
	}
	if typ.Align() > 8 {
		panic(fmt.Sprintf("contention: alignedHot[%v]: alignment %d > 8", typ, typ.Align()))
	}
	size := int(typ.Size())
	// guard + up to hostLinePad-8 bytes of alignment slack + T + guard.
	words := (3*hostLinePad + size + 7) / 8
	buf := make([]uint64, words)
	base := uintptr(unsafe.Pointer(&buf[0]))
	slack := (hostLinePad - base%hostLinePad) % hostLinePad // a multiple of 8
	return (*T)(unsafe.Pointer(&buf[(hostLinePad+int(slack))/8]))
}

// hasPointers reports whether values of t contain Go pointers.
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return true // pointers, unsafe.Pointer, slices, maps, strings, interfaces, funcs, chans (and, conservatively, uintptr)
}

// Pack is a deliberately false-shared placement. Objects made from one Pack
// keep their hot words next to each other in one contiguous host allocation
// (no padding: several of them per host line), and they share modeled
// lines: every member's line 0 is the Pack's first line, every member's
// second line (the wake list's pending flag, uclamp's line B) its second.
// This models what padding prevents, e.g. tg->load_avg sharing its line
// with other hot fields before Deng Pan's task_group re-layout
// (kernel-mechanisms.md 2), or several CPUs' objects in one slab line.
// Size a Pack so its members would fit in one 64-byte line to stay honest:
// 8 Counters, 8 SpinLocks, 4 LLCShareds, 2 Removeds. The replay knows one
// lock per modeled line, so packed locks (SpinLock, Removed) log their
// acquire and release as RMW and Write: the shared line's traffic is
// priced, the wait for a lock held by another CPU is not.
//
// A Pack is set-up state: it is not safe for concurrent use.
type Pack struct {
	s     *weave.Space
	name  string
	home  int
	n     int
	lines []weave.LineID // by role: 0 the main line, 1 the second line
	slabs map[reflect.Type]any
	used  map[reflect.Type]int
}

// NewPack returns a Pack of s for up to n objects of each type, homed at NUMA
// node home.
func NewPack(s *weave.Space, name string, home int, n int) *Pack {
	if n <= 0 {
		panic(fmt.Sprintf("contention: NewPack(%q): n = %d", name, n))
	}
	s.CheckHome(name, home)
	return &Pack{s: s, name: name, home: home, n: n, slabs: map[reflect.Type]any{}, used: map[reflect.Type]int{}}
}

// line returns the Pack's modeled line for role, made on first use.
func (p *Pack) line(role int, kind weave.Kind) weave.LineID {
	for len(p.lines) <= role {
		p.lines = append(p.lines, p.s.NewKindLine(fmt.Sprintf("%s[%d]", p.name, len(p.lines)), p.home, kind))
	}
	return p.lines[role]
}

// packSlot returns the next free T of the Pack's contiguous slab of Ts.
func packSlot[T any](p *Pack) *T {
	typ := reflect.TypeFor[T]()
	slab, ok := p.slabs[typ].([]T)
	if !ok {
		slab = make([]T, p.n)
		p.slabs[typ] = slab
	}
	i := p.used[typ]
	if i >= p.n {
		panic(fmt.Sprintf("contention: Pack %q holds %d objects of type %v already", p.name, p.n, typ))
	}
	p.used[typ] = i + 1
	return &slab[i]
}

// Lines returns the Pack's modeled lines made so far.
func (p *Pack) Lines() []weave.LineID { return append([]weave.LineID(nil), p.lines...) }
