package emu

// Call chains: what perf record -g sees of the kernel paths that charged
// the cycles. Each CPU keeps a trie of the kernel functions it has been
// in (callTree), the frame it is in now, and the ns charged with each
// node as the leaf. A modeled kernel entry point (try_to_wake_up(),
// __schedule(), select_task_rq_fair(), the enqueue and dequeue paths, the
// balancers, the tick) enters its frame for its run (enter/leave), so a
// cost charged inside it to, say, select_idle_sibling is the chain
// try_to_wake_up -> select_task_rq_fair -> select_idle_sibling.
//
// Recording is off unless EnableCallChains was called before the run (the
// CLI's -profile): the hot paths then pay one predictable branch. Without
// it WriteProfile's Children equal Self and no chains are printed.
//
// Simplified: the chains start at the first modeled entry point (no
// syscall entry or user frames above it); user time and idle are chains
// of one frame (the task's function, do_idle); time charged after the
// fact (a stall the weave prices at the barrier, work done at a barrier on
// this CPU's behalf) goes to the chain where this CPU last charged that
// function, or to the function alone if it never did. The chains are
// output only: nothing the model decides reads them.

// callNode is one frame: its function, its caller's node, its first
// callee and next sibling (0: none; node 0 is the root, no function).
type callNode struct {
	sym                 Symbol
	parent, first, next int32
}

// callTree is a CPU's call chains. Owned by the CPU (and by the barrier's
// work on its behalf, which runs on the engine's goroutine).
type callTree struct {
	on    bool // recording (EnableCallChains); set before Run
	nodes []callNode
	ns    []int64 // ns charged with the node as the leaf
	cur   int32   // the frame the CPU is in
	last  []int32 // per symbol: the node it was last charged at (0: never)
}

func newCallTree(nsyms int) callTree {
	return callTree{nodes: make([]callNode, 1, 64), ns: make([]int64, 1, 64), last: make([]int32, nsyms)}
}

// child is p's callee sym, created on first use.
func (c *callTree) child(p int32, sym Symbol) int32 {
	for n := c.nodes[p].first; n != 0; n = c.nodes[n].next {
		if c.nodes[n].sym == sym {
			return n
		}
	}
	n := int32(len(c.nodes))
	c.nodes = append(c.nodes, callNode{sym: sym, parent: p, next: c.nodes[p].first})
	c.nodes[p].first = n
	c.ns = append(c.ns, 0)
	return n
}

// enter makes sym the current frame and returns the one to go back to:
// `defer rq.leave(rq.enter(SymX))`.
func (rq *RQ) enter(sym Symbol) int32 {
	c := &rq.calls
	if !c.on {
		return 0
	}
	prev := c.cur
	c.cur = c.child(prev, sym)
	return prev
}

// leave returns to the frame enter left.
func (rq *RQ) leave(prev int32) {
	if rq.calls.on {
		rq.calls.cur = prev
	}
}

// EnableCallChains records the call chains of what the profile charges
// (before Run): -profile's Children and folded chains.
func (s *Sim) EnableCallChains() {
	for _, rq := range s.cpus {
		rq.calls.on = true
	}
}

// chargeChain adds ns of sym, charged now, to the current chain: sym's
// own frame when the CPU is in it, else a callee of the current frame.
func (rq *RQ) chargeChain(sym Symbol, ns int64) {
	c := &rq.calls
	if !c.on {
		return
	}
	leaf := c.cur
	if leaf == 0 || c.nodes[leaf].sym != sym {
		leaf = c.child(leaf, sym)
	}
	c.ns[leaf] += ns
	c.last[sym] = leaf
}

// chargeLate adds ns of sym charged after the fact (payDebt) to the chain
// where this CPU last charged sym, or to sym alone.
func (rq *RQ) chargeLate(sym Symbol, ns int64) {
	c := &rq.calls
	if !c.on {
		return
	}
	leaf := c.last[sym]
	if leaf == 0 {
		leaf = c.child(0, sym)
		c.last[sym] = leaf
	}
	c.ns[leaf] += ns
}

// charged calls fn with each chain this CPU charged time to: its
// functions, leaf first, and its ns.
func (c *callTree) charged(fn func(chain []Symbol, ns int64)) {
	for n := int32(1); n < int32(len(c.nodes)); n++ {
		if c.ns[n] != 0 {
			fn(c.chain(n), c.ns[n])
		}
	}
}

// symDSO is the shared object perf names for a symbol: the kernel, or
// the program a user symbol belongs to.
func (s *Sim) symDSO(sym Symbol) string {
	if s.syms.user[sym] {
		return s.syms.dso[sym]
	}
	return kernelDSO
}

// kernelDSO is perf's name for the kernel's symbols.
const kernelDSO = "[kernel.kallsyms]"

// symAddr is the made-up address -perf-script and -pprof give a
// function: one per symbol, in the kernel text's range.
func symAddr(sym Symbol) uint64 { return 0xffffffff81000000 + uint64(sym)<<8 }

// chain is node n's functions, leaf first (perf's callee order).
func (c *callTree) chain(n int32) []Symbol {
	var out []Symbol
	for ; n != 0; n = c.nodes[n].parent {
		out = append(out, c.nodes[n].sym)
	}
	return out
}
