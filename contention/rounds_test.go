package contention

import (
	"sync"
	"testing"
	"time"
)

// TestRoundsClaimEachOnce opens rounds of uneven shards to workers that
// park between some of them (past SpinFor) or sleep through whole rounds
// (late: their cursors are stale), the engine claiming too, and checks
// that every item of every round is stepped once, with its round's end,
// and that Wait returns only after the last one.
func TestRoundsClaimEachOnce(t *testing.T) {
	const shards, workers = 3, 4 // more workers than shards: some steal only
	r := NewRounds(shards, workers)
	var mu sync.Mutex
	got := map[[2]int64]int{} // (end, item) -> times stepped
	step := func(item int, end int64) {
		if item%7 == 0 {
			time.Sleep(20 * time.Microsecond) // a slow step: others steal
		}
		mu.Lock()
		got[[2]int64{end, int64(item)}]++
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var seen uint64
			for {
				seen = r.Next(i, seen)
				if r.Stopped() {
					return
				}
				if i == 0 && seen%5 == 0 {
					time.Sleep(SpinFor * 2) // late: the round may be over
				}
				n := 0
				for {
					item, end, ok := r.Claim(i % shards)
					if !ok {
						break
					}
					step(item, end)
					n++
				}
				r.Done(n)
			}
		}()
	}
	want := 0
	for round := range 60 {
		items := make([][]int, shards)
		for sh := range shards {
			for k := range (round*(sh+1) + sh) % 9 {
				items[sh] = append(items[sh], (sh*100+k)*1000+round)
			}
		}
		if round%10 == 3 {
			time.Sleep(3 * SpinFor) // the workers have parked by then
		}
		end := int64(round + 1)
		r.Open(end, items, round%4 != 1)
		n := 0
		for {
			item, e, ok := r.Claim(shards - 1)
			if !ok {
				break
			}
			step(item, e)
			n++
		}
		r.Done(n)
		r.Wait()
		mu.Lock()
		for _, it := range items {
			for _, item := range it {
				want++
				if n := got[[2]int64{end, int64(item)}]; n != 1 {
					t.Errorf("round %d: item %d stepped %d times before Wait returned", round, item, n)
				}
			}
		}
		if len(got) != want {
			t.Errorf("round %d: %d steps in all, want %d", round, len(got), want)
		}
		mu.Unlock()
	}
	r.Stop()
	wg.Wait()
}

// TestRoundsOpenPanicsOverLimit: a shard longer than a cursor holds is a
// programming error, said at once.
func TestRoundsOpenPanicsOverLimit(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	NewRounds(1, 0).Open(1, [][]int{make([]int, MaxRoundItems+1)}, false)
}
