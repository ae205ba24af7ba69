package study

import "sync"

// InOrder runs run(0), run(1), ... run(n-1) on up to jobs goroutines,
// started in index order, and returns at once. Every run gets halt, which
// closes when stop fires or when the returned wait is called (a caller
// that gave up on the rest, say after an error); a run should end at its
// next barrier once halt is closed, and one that has not started yet
// should not start (Halted tells). wait returns once every run has
// returned. The callers collect the results in index order (each run
// signals its own completion), so what they print does not depend on
// jobs: reproduce -j (prefetch) and compare -j.
func InOrder(jobs, n int, stop <-chan struct{}, run func(i int, halt <-chan struct{})) (wait func()) {
	cancel, halt := make(chan struct{}), make(chan struct{})
	go func() {
		select {
		case <-stop:
		case <-cancel:
		}
		close(halt)
	}()
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				run(i, halt)
			}
		}()
	}
	go func() {
		for i := range n {
			next <- i
		}
		close(next)
	}()
	return func() {
		close(cancel)
		wg.Wait()
	}
}

// Halted reports whether halt has closed.
func Halted(halt <-chan struct{}) bool {
	select {
	case <-halt:
		return true
	default:
		return false
	}
}
