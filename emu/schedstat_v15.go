package emu

// schedstatIdleOrder is the order show_schedstat() prints the per-idle-type
// load-balancing counters in: enum cpu_idle_type's. Version 16 (v6.9) has
// __CPU_NOT_IDLE = 0, CPU_IDLE, CPU_NEWLY_IDLE, the model's own indices;
// version 15 (to v6.8) had CPU_IDLE = 0, CPU_NOT_IDLE, CPU_NEWLY_IDLE.
func schedstatIdleOrder(version int) [numIdleTypes]int {
	if version >= 16 {
		return [numIdleTypes]int{cpuNotIdle, cpuIdle, cpuNewlyIdle}
	}
	return [numIdleTypes]int{cpuIdle, cpuNotIdle, cpuNewlyIdle}
}
