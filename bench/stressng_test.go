package bench

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/rqemu/rqemu/emu"
)

func TestStressNGGolden(t *testing.T) {
	_, out := runW(t, "hikey-8", "v6.6-eevdf", 1, "stress-ng", "--nanosleep", "2", "--sem", "2", "--switch", "2", "-t", "0.02", "--metrics-brief", "--times")
	golden(t, "stress-ng/hikey-8.golden", []byte(out))
}

func TestStressNGDriversAgree(t *testing.T) {
	driversAgree(t, "hikey-8", "v6.6-eevdf", 3, 2, "stress-ng", "--nanosleep", "2", "--sem", "2", "--switch", "2", "-t", "0.01", "-cgroup", "docker")
}

// Bad values exit 2 naming the flag as stress-ng spells it.
func TestStressNGBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"-t", "1"}, "--nanosleep"},
		{[]string{"--nanosleep", "1"}, "-t"},
		{[]string{"--nanosleep", "-1", "-t", "1"}, "--nanosleep"},
		{[]string{"--sem", "9000", "-t", "1"}, "--sem"},
		{[]string{"--nanosleep", "7000", "--switch", "2000", "-t", "1"}, "--switch"},
		{[]string{"--nanosleep", "8000", "-t", "1"}, "--nanosleep"},
		{[]string{"--nanosleep", "1", "--nanosleep-threads", "0", "-t", "1"}, "--nanosleep-threads"},
		{[]string{"--sem", "1", "--sem-procs", "1", "-t", "1"}, "--sem-procs"},
		{[]string{"--switch", "1", "--switch-method", "mq", "-t", "1"}, "--switch-method"},
	} {
		_, err := build(machine(t, "hikey-8"), "stress-ng", c.args...)
		var fe *FlagError
		if !errors.As(err, &fe) || fe.Flag != c.flag {
			t.Errorf("%v: err = %v, want a FlagError on %s", c.args, err, c.flag)
		}
	}
	for _, v := range []string{"0", "-1", "x", "1e7", "NaN", "5q"} {
		if _, err := build(machine(t, "hikey-8"), "stress-ng", "--sem", "1", "-t", v); err == nil {
			t.Errorf("-t %s: no error", v)
		}
	}
	for _, v := range []string{"1", "0.5", "2s", "1m", "1h"} {
		if _, err := build(machine(t, "hikey-8"), "stress-ng", "--sem", "1", "-t", v); err != nil {
			t.Errorf("-t %s: %v", v, err)
		}
	}
}

// sngRun runs stress-ng on hikey-8 for 0.2 s and returns its metrics and
// the run's context switches per second.
func sngRun(t *testing.T, args ...string) (map[string]float64, float64) {
	t.Helper()
	res, _ := runW(t, "hikey-8", "v6.6-eevdf", 1, "stress-ng", append(args, "-t", "0.2")...)
	return res.Workload.Metrics(res.Sim).Values, res.Sim.Counters()["rate.context_switches_per_sec"]
}

// What each stressor's bogo op is, on an otherwise idle machine:
//   - a nanosleep thread's op is 19 sleeps of [8, i+7] ns (262 µs in all
//     on average) each ended by its timer's hard expiry, 50 µs of slack
//     later, when nothing else interrupts the CPU: about 1.21 ms plus the
//     19 wakeups;
//   - a sem thread sleeps in usleep(0) on half its ops, until the timer's
//     hard expiry (50 µs), and sched_yield()s alone on its CPU on the
//     others: about 25 µs per op;
//   - a switch op is a write that wakes the reader and a read that wakes
//     the writer: two context switches per op.
func TestStressNGOps(t *testing.T) {
	v, _ := sngRun(t, "--nanosleep", "1", "--nanosleep-threads", "1")
	if perOp := 1e6 / v["nanosleep.ops_per_sec"]; perOp < 1210 || perOp > 1450 {
		t.Errorf("nanosleep: %.0f us per op, want 1210-1450 (19 sleeps of 13.8 us mean + 50 us slack each)", perOp)
	}
	v, _ = sngRun(t, "--sem", "1")
	if perOp := 2 * 1e6 / v["sem.ops_per_sec"]; perOp < 25 || perOp > 35 {
		t.Errorf("sem: %.1f us per op per thread, want 25-35 (half the ops a 50 us usleep(0))", perOp)
	}
	v, cs := sngRun(t, "--switch", "1")
	if r := cs / v["switch.ops_per_sec"]; r < 1.9 || r > 2.2 {
		t.Errorf("switch: %.2f context switches per op, want ≈2", r)
	}
}

// Timer slack coalesces the sleeps of threads on one CPU: a sleep whose
// soft expiry has passed ends at another sleeper's hard expiry, so two
// threads per CPU (CPUs mostly idle) do more ops each than one.
func TestStressNGNanosleepCoalesces(t *testing.T) {
	one, _ := sngRun(t, "--nanosleep", "8", "--nanosleep-threads", "1")
	two, _ := sngRun(t, "--nanosleep", "8", "--nanosleep-threads", "2")
	a, b := one["nanosleep.ops_per_sec"]/8, two["nanosleep.ops_per_sec"]/16
	t.Logf("ops/s per thread: one per CPU %.0f, two per CPU %.0f", a, b)
	if b <= 1.03*a {
		t.Errorf("two threads per CPU: %.0f ops/s per thread, not 3%% above one per CPU's %.0f", b, a)
	}
}

// lkp's parser reads the --metrics-brief table: ops_per_sec is the real
// time rate, as the -json metric, up to the table's two decimals; the
// --metrics table parses the same.
func TestLKPStressNG(t *testing.T) {
	for _, table := range []string{"--metrics-brief", "--metrics"} {
		res, out := runW(t, "hikey-8", "v6.6-eevdf", 1, "stress-ng", "--nanosleep", "1", "--switch", "1", "-t", "0.01", table, "--times")
		st := LKPStats("stress-ng", out)
		v := res.Workload.Metrics(res.Sim).Values
		for _, name := range []string{"nanosleep", "switch"} {
			got, want := st["stress-ng."+name+".ops_per_sec"], v[name+".ops_per_sec"]
			if math.Abs(got-want) > 0.006 || st["stress-ng."+name+".pass"] != 1 || st["stress-ng."+name+".ops"] != v[name+".ops"] {
				t.Errorf("%s: lkp stats %v, want %s.ops_per_sec %v, ops %v\n%s", table, st, name, want, v[name+".ops"], out)
			}
		}
	}
	if st := LKPStats("stress-ng", "stress-ng: info:  [1] dispatching hogs: 1 sem\n"); len(st) != 0 {
		t.Errorf("stats without a metrics table: %v", st)
	}
	zero := "stress-ng: info:  [1]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)\n" +
		"stress-ng: info:  [1] sem                   0      1.00      0.00      0.00         0.00           0.00\n"
	if st := LKPStats("stress-ng", zero); st["stress-ng.sem.fail"] != 1 || strings.Contains(strings.Join(keys(st), ","), "pass") {
		t.Errorf("a stressor with 0 ops: %v, want sem.fail", st)
	}
}

func keys(m map[string]float64) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}

// A nanosleep thread runs sngUserNanosleep cycles of user code per sleep
// (clock_gettime() twice, stress_mwc32modn(), the overrun arithmetic), the
// worker's poll loop sngUserWorker per wakeup.
func TestStressNGNanosleepUserPerSleep(t *testing.T) {
	m := machine(t, "hikey-8")
	res, _ := runW(t, "hikey-8", "v6.6-eevdf", 1, "stress-ng", "--nanosleep", "1", "--nanosleep-threads", "1", "-t", "0.025")
	st := res.Workload.(*stressNG).stressors[0]
	thread, worker := st.user[0], st.user[1]
	per, poll := cyclesNS(m, sngUserNanosleep), cyclesNS(m, sngUserWorker)
	if thread%per != 0 || thread < 19*st.ops[0]*per || st.ops[0] == 0 {
		t.Errorf("thread: %d ns of user code over %d ops, want a multiple of %d ns, at least 19 per op", thread, st.ops[0], per)
	}
	if worker < poll || worker%poll != 0 || worker > 2*poll {
		t.Errorf("worker: %d ns of user code in 25 ms, want the two 10 ms polls of %d ns each", worker, poll)
	}
}

// stress_pthread_func() counts a pass (ctxt->counter++) after the loop:
// once the pass's 19th nanosleep(), of 8 ns, has returned, not when it is
// asked. The sleeps asked are stress_mwc32modn(i) + 8 ns for i = 2^18 down
// to 1.
func TestStressNGNanosleepCountsAfterLastSleep(t *testing.T) {
	st := &sngStressor{ops: []int64{0}, user: []int64{0}}
	th := &sngNanosleepThread{st: st, userNS: 17, shift: 18}
	top := func(n int) int { return n - 1 } // the largest draw
	for pass := 1; pass <= 2; pass++ {
		for i := 1 << 18; i > 0; i >>= 1 {
			// The first pass's first user code; the others' came with
			// the return from the previous pass's last sleep.
			if pass == 1 || i != 1<<18 {
				if a := th.next(top); a.Op != emu.ActRun || a.NS != 17 {
					t.Fatalf("pass %d, i %d: %+v, want the user code (Run 17)", pass, i, a)
				}
			}
			a := th.next(top)
			if a.Op != emu.ActSleep || a.NS != int64(i+7) || a.Slack != timerSlackNS {
				t.Fatalf("pass %d, i %d: %+v, want a nanosleep() of %d ns with 50 us slack", pass, i, a, i+7)
			}
			if got := st.ops[0]; got != int64(pass-1) {
				t.Fatalf("pass %d, i %d asked: %d ops counted, want %d (the pass ends when its last sleep returns)", pass, i, got, pass-1)
			}
		}
		if a := th.next(top); a.Op != emu.ActRun || st.ops[0] != int64(pass) {
			t.Fatalf("after pass %d's last sleep: %+v and %d ops, want the user code and %d", pass, a, st.ops[0], pass)
		}
	}
	if st.user[0] != 2*19*17+17 {
		t.Errorf("user code issued %d ns, want %d", st.user[0], 2*19*17+17)
	}
}
