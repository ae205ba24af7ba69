package emu

import "reflect"

// Counters are the run's machine-wide numbers, by name: every exported
// int64 counter of RQStats summed over the CPUs ("sched.NAME"), the tasks'
// migrations and voluntary and involuntary switches, the per-second rates of wakeups, migrations and context
// switches over the virtual time run ("rate.*"), and the engine's own
// statistics ("run.*": run.accesses is the shared-line accesses the weave
// served, the engine's unit of work). The names are the -json and NDJSON counter keys
// and compare's rows. Read it between runs or after one.
func (s *Sim) Counters() map[string]float64 {
	c := map[string]float64{}
	// By reflection, so that a counter added to RQStats is reported
	// without a second list to keep.
	for cpu := range s.Machine().CPUs {
		rq := s.RQ(cpu)
		v := reflect.ValueOf(rq.Stats)
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if f.IsExported() && f.Type.Kind() == reflect.Int64 {
				c["sched."+f.Name] += float64(v.Field(i).Int())
			}
		}
		// rq->nr_running's integral up to now: the interval since its
		// last change is still open (addNrRunning closes it at the next).
		c["sched.NrRunningNS"] += float64(rq.nrRunningOpenNS(s.Now()))
	}
	switches := c["sched.NrSwitches"]
	var mig, wakeups, vol, invol int64
	for _, t := range s.Tasks() {
		mig += t.Stats.NrMigrations
		wakeups += t.Stats.NrWakeups
		vol += t.Stats.NrVolSwitch
		invol += t.Stats.NrInvolSwitch
	}
	sec := float64(max(s.Now(), 1)) / 1e9
	c["sched.nr_migrations"] = float64(mig)
	// /proc/PID/status's voluntary_ctxt_switches and
	// nonvoluntary_ctxt_switches, summed over the tasks.
	c["sched.nr_voluntary_switches"] = float64(vol)
	c["sched.nr_involuntary_switches"] = float64(invol)
	c["rate.wakeups_per_sec"] = float64(wakeups) / sec
	c["rate.migrations_per_sec"] = float64(mig) / sec
	c["rate.context_switches_per_sec"] = switches / sec
	c["run.virtual_sec"] = sec
	c["run.epochs"] = float64(s.Epochs)
	c["run.hold_passes"] = float64(s.HoldPasses)
	c["run.late_msgs"] = float64(s.LateMsgs)
	c["run.accesses"] = float64(s.space.Woven())
	s.tgSiteCounters(c)
	return c
}
