package contention

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// userHZ is the unit of /proc/stat's CPU times: USER_HZ, 100 on every
// Linux architecture (fs/proc/stat.c: show_stat(), nsec_to_clock_t()).
const userHZ = 100

// LoadSample is what LoadMeter reads at one instant.
type LoadSample struct {
	Wall time.Time
	// BusyTicks is the time all CPUs spent neither idle nor waiting for
	// I/O, in USER_HZ ticks (/proc/stat's "cpu" line: user + nice +
	// system + irq + softirq + steal); CPUs is the number of cpuN lines.
	BusyTicks int64
	CPUs      int
	// OwnSec is this process's CPU time and that of its waited-for
	// children (getrusage RUSAGE_SELF + RUSAGE_CHILDREN), in seconds.
	OwnSec float64
}

// LoadMeter measures how much of the machine other processes used while
// a probe or a benchmark ran: the CPUs' busy time minus our own.
type LoadMeter struct{ start LoadSample }

// StartLoad starts a LoadMeter, or returns nil where /proc/stat cannot
// be read (not Linux): Other then says -1.
func StartLoad() *LoadMeter {
	s, err := readLoad()
	if err != nil {
		return nil
	}
	return &LoadMeter{start: s}
}

// Other is the share of all CPUs' time since StartLoad that processes
// other than this one and its children used, in [0, 1], or -1 if unknown.
func (m *LoadMeter) Other() float64 {
	if m == nil {
		return -1
	}
	end, err := readLoad()
	if err != nil {
		return -1
	}
	return OtherLoad(m.start, end)
}

// OtherLoad is the share of the CPUs' time between two samples that
// others used: (busy - own) / (wall x CPUs), clamped to [0, 1]; -1 when
// the samples cannot tell (no time passed, no CPUs).
func OtherLoad(a, b LoadSample) float64 {
	wall := b.Wall.Sub(a.Wall).Seconds()
	if wall <= 0 || b.CPUs <= 0 {
		return -1
	}
	busy := float64(b.BusyTicks-a.BusyTicks) / userHZ
	other := (busy - (b.OwnSec - a.OwnSec)) / (wall * float64(b.CPUs))
	return min(max(other, 0), 1)
}

func readLoad() (LoadSample, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return LoadSample{}, err
	}
	s, err := parseProcStat(data)
	if err != nil {
		return LoadSample{}, err
	}
	var self, kids unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &self); err != nil {
		return LoadSample{}, err
	}
	if err := unix.Getrusage(unix.RUSAGE_CHILDREN, &kids); err != nil {
		return LoadSample{}, err
	}
	tv := func(t unix.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	s.OwnSec = tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
	s.Wall = time.Now()
	return s, nil
}

// parseProcStat reads the "cpu" line's busy ticks and counts the cpuN
// lines of /proc/stat's text.
func parseProcStat(data []byte) (LoadSample, error) {
	var s LoadSample
	found := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			s.CPUs++
			continue
		}
		// user nice system idle iowait irq softirq steal [guest guest_nice]:
		// guest time is already counted in user (account_guest_time()).
		if len(f) < 9 {
			return LoadSample{}, fmt.Errorf("/proc/stat: cpu line has %d fields, want at least 8", len(f)-1)
		}
		for i, v := range f[1:9] {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return LoadSample{}, fmt.Errorf("/proc/stat: cpu field %d: %q is not a number", i+1, v)
			}
			if i != 3 && i != 4 { // idle, iowait
				s.BusyTicks += n
			}
		}
		found = true
	}
	if !found {
		return LoadSample{}, fmt.Errorf("/proc/stat: no cpu line")
	}
	return s, nil
}
