package emu

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestLayoutFor: a feature set prints as the profile nearest it.
func TestLayoutFor(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"v5.15-cfs", "v5.15-cfs"},
		{"v5.19-cfs", "v5.19-cfs"},
		{"v6.5-cfs", "v6.5-cfs"},
		{"v6.6-eevdf", "v6.6-eevdf"},
		{"v6.6-eevdf,+TG_LOAD_RATELIMIT", "v6.7-eevdf"},
		{"v6.6-eevdf,+TTWU_QUEUE_L2", "v6.6-eevdf"},
		{"v6.11-eevdf", "v6.11-eevdf"},
		{"v6.12-eevdf,-PREEMPT_SHORT", "v6.11-eevdf"},
		{"v6.12-eevdf,+RESCHED_RQ_NR_RUNNING", "v6.12-eevdf"},
	} {
		f, _, err := ParseFeatures(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := layoutFor(f).profile; got != tc.want {
			t.Errorf("%s prints as %s, want %s", tc.spec, got, tc.want)
		}
	}
	for _, p := range Profiles {
		if _, ok := procLayouts[p.Name]; !ok {
			t.Errorf("profile %s has no procLayout", p.Name)
		}
	}
}

// TestSchedstatVersion: /proc/schedstat is version 15 to v6.8, with the
// per-idle-type columns in enum cpu_idle_type's old order (CPU_IDLE,
// CPU_NOT_IDLE, CPU_NEWLY_IDLE), and 16 from v6.9 (__CPU_NOT_IDLE first).
func TestSchedstatVersion(t *testing.T) {
	for _, tc := range []struct {
		profile string
		version string
		first   int // the idle type of the domain line's first 8 counters
	}{
		{"v5.15-cfs", "version 15", cpuIdle},
		{"v6.6-eevdf", "version 15", cpuIdle},
		{"v6.7-eevdf", "version 15", cpuIdle},
		{"v6.11-eevdf", "version 16", cpuNotIdle},
		{"v6.12-eevdf", "version 16", cpuNotIdle},
	} {
		s := newSimSched(t, "hikey-8", tc.profile, "")
		mixedWorkload(t, s)
		s.Run(30 * ms)
		var b bytes.Buffer
		if err := s.WriteSchedstat(&b); err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(b.String(), "\n"); first != tc.version {
			t.Errorf("%s: first line %q, want %q", tc.profile, first, tc.version)
		}
		checked := false
		for cpu := range s.cpus {
			for i, d := range s.domains[cpu] {
				ls := d.Stats.LBCount
				if ls[cpuIdle] == ls[cpuNotIdle] {
					continue
				}
				f := strings.Fields(lineOf(cpuBlock(b.String(), cpu), fmt.Sprintf("domain%d ", i)))
				second := cpuIdle + cpuNotIdle - tc.first
				if f[2] != fmt.Sprint(ls[tc.first]) || f[10] != fmt.Sprint(ls[second]) || f[18] != fmt.Sprint(ls[cpuNewlyIdle]) {
					t.Errorf("%s cpu%d domain%d: lb_count columns %s %s %s, want %d %d %d", tc.profile, cpu, i, f[2], f[10], f[18],
						ls[tc.first], ls[second], ls[cpuNewlyIdle])
				}
				checked = true
			}
		}
		if !checked {
			t.Errorf("%s: no domain with different busy and idle lb_count to tell the order", tc.profile)
		}
	}
}

// cpuBlock is the cpuN line and its domain lines.
func cpuBlock(text string, cpu int) string {
	_, rest, _ := strings.Cut(text, fmt.Sprintf("\ncpu%d ", cpu))
	block, _, _ := strings.Cut(rest, "\ncpu")
	return "\n" + block
}

// TestProcPidSchedFields: /proc/<pid>/sched has the fields of the release's
// proc_sched_show_task(), each "%-45s:%21Ld" or "%-45s:%14Ld.%06ld".
func TestProcPidSchedFields(t *testing.T) {
	line := regexp.MustCompile(`^(.{45}):( {0,20}-?\d+|( {0,13}-?\d+)\.\d{6})$`)
	for _, tc := range []struct {
		profile   string
		have, not []string
	}{
		{"v5.15-cfs", []string{"se.statistics.wait_sum", "se.statistics.nr_wakeups_affine", "se.statistics.exec_max",
			"se.statistics.nr_failed_migrations_hot", "se.avg.util_est.ewma", "se.avg.util_est.enqueued"},
			[]string{"wait_sum", "sum_block_runtime", "se.statistics.sum_block_runtime", "se.avg.util_est"}},
		{"v6.6-eevdf", []string{"sum_sleep_runtime", "sum_block_runtime", "exec_max", "nr_wakeups_affine", "nr_wakeups_affine_attempts",
			"nr_wakeups_idle", "nr_wakeups_passive", "nr_failed_migrations_affine", "nr_failed_migrations_running",
			"nr_failed_migrations_hot", "se.avg.util_est.ewma", "uclamp.min", "effective uclamp.max"},
			[]string{"se.statistics.wait_sum", "se.avg.util_est", "se.slice"}},
		{"v6.12-eevdf", []string{"sum_block_runtime", "nr_wakeups_affine", "se.avg.util_est"},
			[]string{"se.avg.util_est.ewma", "se.avg.util_est.enqueued"}},
	} {
		s := newSimSched(t, "hikey-8", tc.profile, "")
		mixedWorkload(t, s)
		s.Run(10 * ms)
		var b bytes.Buffer
		if err := s.WriteTaskStats(&b); err != nil {
			t.Fatal(err)
		}
		block, _, _ := strings.Cut(b.String()[1:], "\n"+s.tasks[1].Comm+" (")
		keys := map[string]bool{}
		for _, l := range strings.Split(block, "\n")[2:] {
			if strings.HasPrefix(l, "current_node=") {
				continue
			}
			m := line.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("%s: line %q is neither %%-45s:%%21Ld nor %%-45s:%%14Ld.%%06ld", tc.profile, l)
			}
			keys[strings.TrimSpace(m[1])] = true
		}
		for _, k := range tc.have {
			if !keys[k] {
				t.Errorf("%s: no %s", tc.profile, k)
			}
		}
		for _, k := range tc.not {
			if keys[k] {
				t.Errorf("%s: %s printed; the release has no such field", tc.profile, k)
			}
		}
	}
}
