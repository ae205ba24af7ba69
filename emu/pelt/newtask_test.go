package pelt

import "testing"

func TestInitEntityRunnableAverage(t *testing.T) {
	sa := Avg{LastUpdateTime: 99, LoadSum: 5, UtilAvg: 7, UtilEst: UtilEst{3, 4}}
	InitEntityRunnableAverage(&sa, true, 1024)
	if sa != (Avg{LoadAvg: 1024}) {
		t.Errorf("task: %+v, want only load_avg = weight", sa)
	}
	InitEntityRunnableAverage(&sa, false, 1024)
	if sa != (Avg{}) {
		t.Errorf("group entity: %+v, want zero", sa)
	}
}

// TestNewTaskUtilSequence: successive nice-0 forks onto an idle CPU of
// capacity 1024, each attached before the next, get util_avg 512, 256,
// 128, … while the cfs_rq goes 512, 768, 896, … (the example in
// post_init_entity_util_avg()'s comment).
func TestNewTaskUtilSequence(t *testing.T) {
	var cfs Avg
	wantCfs := uint64(0)
	for i := range 12 {
		var p Avg
		InitEntityRunnableAverage(&p, true, 1024)
		PostInitEntityUtilAvg(&p, &cfs, 1024, 1024)
		want := uint64(512) >> i
		if p.UtilAvg != want || p.RunnableAvg != want {
			t.Fatalf("fork %d: util_avg %d runnable_avg %d, want %d", i+1, p.UtilAvg, p.RunnableAvg, want)
		}
		Attach(&cfs, &p, 1024)
		wantCfs += want
		if cfs.UtilAvg != wantCfs || cfs.LoadAvg != uint64(i+1)*1024 {
			t.Fatalf("fork %d: cfs util_avg %d load_avg %d", i+1, cfs.UtilAvg, cfs.LoadAvg)
		}
	}
	if cfs.UtilAvg != 1023 {
		t.Fatalf("cfs_rq util_avg ends at %d, want 1023", cfs.UtilAvg)
	}
}

func TestPostInitEntityUtilAvg(t *testing.T) {
	for _, c := range []struct {
		name                   string
		cfsUtil, cfsLoad, w, c uint64
		want                   uint64
	}{
		{"idle CPU: half the capacity", 0, 0, 1024, 1024, 512},
		{"idle little CPU", 0, 0, 1024, 512, 256},
		{"extrapolated below the cap", 200, 2047, 1024, 1024, 100},
		{"extrapolated, heavier task", 200, 2047, 3121, 1024, 304},
		{"extrapolated above the cap", 600, 1023, 1024, 1024, 212},
		{"no capacity left", 1023, 1024, 1024, 1024, 0},
		{"over capacity (negative cap)", 1100, 4096, 1024, 1024, 0},
	} {
		p := Avg{LoadAvg: c.w}
		cfs := Avg{UtilAvg: c.cfsUtil, LoadAvg: c.cfsLoad}
		PostInitEntityUtilAvg(&p, &cfs, c.w, c.c)
		if p.UtilAvg != c.want || p.RunnableAvg != c.want {
			t.Errorf("%s: util_avg %d runnable_avg %d, want %d", c.name, p.UtilAvg, p.RunnableAvg, c.want)
		}
	}
}
