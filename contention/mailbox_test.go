package contention

import (
	"testing"
	"time"
)

// TestMailboxHandsEveryPost posts epochs to a worker that parks between
// some of them (past WorkerSpin) and checks it takes each post once, in
// order, then quits.
func TestMailboxHandsEveryPost(t *testing.T) {
	var b Mailbox
	b.Init()
	var pending Pending
	got := make(chan int64, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var seen uint64
		for {
			seen = b.Next(seen)
			if b.Quit() {
				return
			}
			got <- b.End()
			pending.Add(-1)
		}
	}()
	for i, wait := range []time.Duration{0, 0, WorkerSpin * 3, 0, WorkerSpin * 2} {
		time.Sleep(wait) // the worker has parked on wake by then
		pending.Add(1)
		b.Post(int64(100 * (i + 1)))
		select {
		case e := <-got:
			if e != int64(100*(i+1)) {
				t.Fatalf("post %d: worker took end %d", i, e)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("post %d: the parked worker was not woken", i)
		}
		for pending.Load() != 0 {
			time.Sleep(time.Microsecond)
		}
	}
	b.Post(-1)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not quit")
	}
	if len(got) != 0 {
		t.Errorf("%d extra epochs taken", len(got))
	}
}
