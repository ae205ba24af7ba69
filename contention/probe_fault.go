package contention

import (
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// FaultResult is the outcome of a page-fault probe: the cost of one user
// page fault that allocates and fills a private 4 KiB page.
type FaultResult struct {
	CPU     int `json:"cpu"`
	Pages   int `json:"pages"`   // pages touched per batch
	Batches int `json:"batches"` // measured batches (warm-up excluded)
	// UsPerFault is the median over batches of the mean time per first
	// touch, µs.
	UsPerFault float64   `json:"us_per_fault"`
	BatchUs    []float64 `json:"batch_us"`
}

// String formats the result on one line.
func (r FaultResult) String() string {
	return fmt.Sprintf("page faults on cpu%d: %.3f us per first touch (median of %d batches of %d pages)",
		r.CPU, r.UsPerFault, r.Batches, r.Pages)
}

// PageFaults measures, on host CPU cpu, the first write to each page of a
// fresh private anonymous mapping: a user fault that goes
// do_user_addr_fault() -> handle_mm_fault() -> do_anonymous_page() (mm/
// memory.c): allocate a page, zero it, install the PTE. A forked child's
// copy-on-write fault (do_wp_page() -> wp_page_copy()) does the same work
// with a copy instead of the zeroing, so this stands for it
// (hwmodel.OpPageFault). Transparent huge pages are refused for the
// mapping (MADV_NOHUGEPAGE), so every 4 KiB page faults once. Each batch
// maps, touches and unmaps pages pages; the first batch warms the
// allocator and is not counted.
func PageFaults(cpu, pages, batches int) (FaultResult, error) {
	if pages < 1 || batches < 1 {
		return FaultResult{}, fmt.Errorf("page faults: pages %d and batches %d must be positive", pages, batches)
	}
	const page = 4096
	res := FaultResult{CPU: cpu, Pages: pages, Batches: batches}
	var abort atomic.Bool
	err := runPinned([]int{cpu}, &abort, nil, func(int) error {
		for b := 0; b <= batches; b++ {
			mem, err := unix.Mmap(-1, 0, pages*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
			if err != nil {
				return fmt.Errorf("page faults: mmap %d pages: %w", pages, err)
			}
			// Best effort: a kernel without THP has nothing to refuse.
			_ = unix.Madvise(mem, unix.MADV_NOHUGEPAGE)
			t0 := time.Now()
			for i := 0; i < len(mem); i += page {
				mem[i] = 1
			}
			d := time.Since(t0)
			if err := unix.Munmap(mem); err != nil {
				return fmt.Errorf("page faults: munmap: %w", err)
			}
			if b > 0 {
				res.BatchUs = append(res.BatchUs, float64(d.Nanoseconds())/1e3/float64(pages))
			}
		}
		return nil
	})
	if err != nil {
		return FaultResult{}, err
	}
	res.UsPerFault = summarize(res.BatchUs).median
	return res, nil
}
