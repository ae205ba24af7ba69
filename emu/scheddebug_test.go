package emu

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// cLine checks line against a debug.c SEQ_printf() format: the format's
// conversions become capture groups, and the values they capture,
// printed again with the format's own widths and flags, must give the
// line back byte for byte. name, when set, is the first %s or %-Ns (the
// #x of the P()/PN() macros).
func cLine(format, name, line string) error {
	conv := regexp.MustCompile(`%(-?)(0?)(\d*)(?:\.\*)?(L|l|ll|lld)?([dusc])|%(-?)(0?)(\d*)(lld|Ld|ld|lu|u|d)`)
	if name != "" {
		loc := regexp.MustCompile(`%-?\d*s`).FindStringIndex(format)
		if loc == nil {
			return fmt.Errorf("format %q has no %%s for %q", format, name)
		}
		format = format[:loc[0]] + strings.ReplaceAll(fmt.Sprintf(goVerb(format[loc[0]:loc[1]]), name), "%", "%%") + format[loc[1]:]
	}
	var re strings.Builder
	var verbs []string
	re.WriteString("^")
	last := 0
	for _, m := range conv.FindAllStringSubmatchIndex(format, -1) {
		lit := format[last:m[0]]
		re.WriteString(regexp.QuoteMeta(strings.ReplaceAll(lit, "%%", "%")))
		v := goVerb(format[m[0]:m[1]])
		verbs = append(verbs, v)
		switch {
		case strings.HasSuffix(v, "c"):
			re.WriteString("(.)")
		case strings.HasSuffix(v, "s") && v != "%s":
			re.WriteString("( *\\S+ *)")
		case strings.HasSuffix(v, "s"):
			re.WriteString("(\\S+)")
		case strings.HasPrefix(v, "%0"):
			re.WriteString("(\\d+)")
		default:
			re.WriteString("( *-?\\d+)")
		}
		last = m[1]
	}
	re.WriteString(regexp.QuoteMeta(strings.ReplaceAll(format[last:], "%%", "%")) + "$")
	got := regexp.MustCompile(re.String()).FindStringSubmatch(line)
	if got == nil {
		return fmt.Errorf("line %q does not match the format %q", line, format)
	}
	var again strings.Builder
	last = 0
	for i, m := range conv.FindAllStringSubmatchIndex(format, -1) {
		again.WriteString(strings.ReplaceAll(format[last:m[0]], "%%", "%"))
		v, s := verbs[i], got[i+1]
		switch {
		case strings.HasSuffix(v, "c"):
			fmt.Fprintf(&again, v, s[0])
		case strings.HasSuffix(v, "s"):
			fmt.Fprintf(&again, v, strings.TrimSpace(s))
		default:
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return fmt.Errorf("line %q: %v", line, err)
			}
			fmt.Fprintf(&again, v, n)
		}
		last = m[1]
	}
	again.WriteString(strings.ReplaceAll(format[last:], "%%", "%"))
	if again.String() != line {
		return fmt.Errorf("line %q is not what %q prints (%q)", line, format, again.String())
	}
	return nil
}

// goVerb turns a C conversion into Go's: the length modifiers go, %u is %d.
func goVerb(c string) string {
	c = strings.NewReplacer("lld", "d", "Ld", "d", "ld", "d", "lu", "d", "u", "d", ".*", "").Replace(c)
	return c
}

// sdFormat is a layout fixture: its blocks of format lines by name.
type sdFormat map[string][]string

func readSDFormat(t *testing.T, release string) sdFormat {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "scheddebug", "v"+release+".fmt"))
	if err != nil {
		t.Fatal(err)
	}
	f, block := sdFormat{}, ""
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "@"):
			block = l[1:]
			f[block] = []string{}
		default:
			f[block] = append(f[block], l)
		}
	}
	return f
}

// sdReader walks a sched_debug text through a fixture's blocks.
type sdReader struct {
	lines      []string
	i          int
	x86, stats bool
}

func (r *sdReader) block(f sdFormat, name string) ([]string, error) {
	var got []string
	for _, fl := range f[name] {
		switch {
		case strings.HasPrefix(fl, "x86 "):
			if !r.x86 {
				continue
			}
			fl = fl[4:]
		case strings.HasPrefix(fl, "arm "):
			if r.x86 {
				continue
			}
			fl = fl[4:]
		case strings.HasPrefix(fl, "schedstat "):
			if !r.stats {
				continue
			}
			fl = fl[len("schedstat "):]
		}
		if r.i >= len(r.lines) {
			return got, fmt.Errorf("%s: the text ends before %q", name, fl)
		}
		line := r.lines[r.i]
		r.i++
		got = append(got, line)
		format, key, _ := strings.Cut(fl, "|")
		if !strings.Contains(format, "%") {
			if line != format {
				return got, fmt.Errorf("%s: line %d is %q, want %q", name, r.i, line, format)
			}
			continue
		}
		if err := cLine(format, key, line); err != nil {
			return got, fmt.Errorf("%s: line %d: %v", name, r.i, err)
		}
	}
	return got, nil
}

// next reports whether the next block starts with a blank line and then
// prefix.
func (r *sdReader) next(prefix string) bool {
	return r.i+1 < len(r.lines) && r.lines[r.i] == "" && strings.HasPrefix(r.lines[r.i+1], prefix)
}

// checkSchedDebug reads text against the release's fixture: the header,
// then per CPU its rq fields, its cfs_rqs (the group ones with their
// entity), rt_rqs, dl_rq and task table, in debug.c's order.
func checkSchedDebug(t *testing.T, s *Sim, text, release string) {
	t.Helper()
	f := readSDFormat(t, release)
	r := &sdReader{lines: strings.Split(text, "\n"), x86: s.m.Arch == "x86_64", stats: s.tun.Schedstats}
	if _, err := r.block(f, "header"); err != nil {
		t.Fatal(err)
	}
	for cpu := range s.cpus {
		if _, err := r.block(f, "cpu"); err != nil {
			t.Fatal(err)
		}
		var paths []string
		for r.next("cfs_rq[") {
			got, err := r.block(f, "cfs_rq")
			if err != nil {
				t.Fatal(err)
			}
			head := got[1]
			if want := fmt.Sprintf("cfs_rq[%d]:", cpu); !strings.HasPrefix(head, want) {
				t.Fatalf("%q on cpu%d", head, cpu)
			}
			path := strings.TrimPrefix(head, fmt.Sprintf("cfs_rq[%d]:", cpu))
			paths = append(paths, path)
			if path != "/" {
				if _, err := r.block(f, "cfs_group"); err != nil {
					t.Fatal(err)
				}
			}
		}
		if len(paths) == 0 || paths[len(paths)-1] != "/" {
			t.Fatalf("cpu%d: cfs_rqs %v, want the root's last", cpu, paths)
		}
		for r.next("rt_rq[") {
			if _, err := r.block(f, "rt_rq"); err != nil {
				t.Fatal(err)
			}
		}
		for _, b := range []string{"dl_rq", "tasks"} {
			if _, err := r.block(f, b); err != nil {
				t.Fatal(err)
			}
		}
		for r.i < len(r.lines) && r.lines[r.i] != "" {
			if err := cLine(f["task"][0], "", r.lines[r.i]); err != nil {
				t.Fatalf("cpu%d task line %d: %v", cpu, r.i+1, err)
			}
			r.i++
		}
		if r.i >= len(r.lines) || r.lines[r.i] != "" {
			t.Fatalf("cpu%d: no blank line after the tasks", cpu)
		}
		r.i++
	}
	if rest := strings.Join(r.lines[r.i:], "\n"); rest != "" {
		t.Fatalf("text after the last CPU: %.200q", rest)
	}
}

// lkpSchedDebug is lkp-tests' programs/sched_debug/parse (ruby) in Go:
// "key.cpu: value" for each field line under a "cpu#N" or "X[N]..."
// section, "key: value" elsewhere; /autogroup- queues skipped.
func lkpSchedDebug(text string) []string {
	field := regexp.MustCompile(`^\s*(\S+)\s*:\s+([0-9.-]+)`)
	hash, bracket := regexp.MustCompile(`^(.*)#([0-9]+)$`), regexp.MustCompile(`^(.*)\[([0-9]+)\](.*)$`)
	var out []string
	prefix, no := "", ""
	for _, line := range strings.Split(text, "\n") {
		switch m := field.FindStringSubmatch(line); {
		case strings.HasPrefix(line, "time:"):
			out = append(out, line)
			prefix = ""
		case strings.HasPrefix(line, "Sched Debug Version:"), strings.HasPrefix(line, "runnable tasks:"):
		case m != nil:
			if strings.Contains(prefix, ":/autogroup-") {
				continue
			}
			if no != "" {
				out = append(out, fmt.Sprintf("%s%s.%s: %s", prefix, m[1], no, m[2]))
			} else {
				out = append(out, fmt.Sprintf("%s%s: %s", prefix, m[1], m[2]))
			}
		default:
			v := strings.Fields(line)
			if len(v) == 0 {
				continue
			}
			prefix, no = strings.ReplaceAll(v[0], ",", ""), ""
			if m := hash.FindStringSubmatch(prefix); m != nil {
				prefix, no = m[1], m[2]
			} else if m := bracket.FindStringSubmatch(prefix); m != nil {
				prefix, no = m[1]+m[3], m[2]
			}
		}
	}
	return out
}

// TestSchedDebugLayout: for every profile, -sched-debug's text reads
// line for line against the format strings of debug.c at the release
// (testdata/scheddebug/vX.fmt, written from the source), and lkp's
// sched_debug parser finds the per-CPU keys a tg->load_avg study reads.
// With LKP_SRC set (an lkp-tests checkout) and ruby installed, lkp's own
// parser reads it too and prints the same keys.
func TestSchedDebugLayout(t *testing.T) {
	for _, tc := range []struct {
		topo, profile, release string
		sched                  string
	}{
		{"hikey-8", "v5.15-cfs", "5.15", ""},
		{"hikey-8", "v5.19-cfs", "5.19", ""},
		{"hikey-8", "v6.5-cfs", "6.5", ""},
		{"hikey-8", "v6.6-eevdf", "6.6", ""},
		{"hikey-8", "v6.6-eevdf", "6.6", "sched_schedstats=0"},
		{"xeon-e5-2x10", "v6.6-eevdf", "6.6", ""},
		{"hikey-8", "v6.7-eevdf", "6.7", ""},
		{"hikey-8", "v6.11-eevdf", "6.11", ""},
		{"hikey-8", "v6.12-eevdf", "6.12", ""},
		{"hikey-8", "v6.12-eevdf,+RESCHED_RQ_NR_RUNNING", "6.12", ""},
	} {
		t.Run(tc.topo+"/"+tc.profile+"/"+tc.sched, func(t *testing.T) {
			s := newSimSched(t, tc.topo, tc.profile, tc.sched)
			mixedWorkload(t, s)
			s.Run(20 * ms)
			var b bytes.Buffer
			if err := s.WriteSchedDebug(&b); err != nil {
				t.Fatal(err)
			}
			if got := s.ProcProfile(); got != strings.Split(tc.profile, ",")[0] {
				t.Fatalf("ProcProfile %q, want %q", got, tc.profile)
			}
			checkSchedDebug(t, s, b.String(), tc.release)

			keys := map[string]string{}
			for _, l := range lkpSchedDebug("time: 1\n" + b.String()) {
				k, v, _ := strings.Cut(l, ": ")
				keys[k] = v
			}
			tg := s.groups[0]
			for cpu := range s.cpus {
				want := map[string]string{
					fmt.Sprintf("cpu.nr_running.%d", cpu):            strconv.Itoa(s.cpus[cpu].nrRunning),
					fmt.Sprintf("cfs_rq:/.load_avg.%d", cpu):         strconv.FormatUint(s.cpus[cpu].cfs.avg.LoadAvg, 10),
					fmt.Sprintf("cfs_rq:/.h_nr_running.%d", cpu):     strconv.Itoa(s.cpus[cpu].cfs.hNrRunning),
					fmt.Sprintf("dl_rq:.dl_bw->bw.%d", cpu):          "996147",
					fmt.Sprintf("rt_rq:/.rt_runtime.%d", cpu):        "950.000000",
					fmt.Sprintf("cpu.nr_switches.%d", cpu):           strconv.FormatInt(s.cpus[cpu].Stats.NrSwitches, 10),
					fmt.Sprintf("cfs_rq:/.util_avg.%d", cpu):         strconv.FormatUint(s.cpus[cpu].cfs.avg.UtilAvg, 10),
					fmt.Sprintf("cfs_rq:/.runnable_avg.%d", cpu):     strconv.FormatUint(s.cpus[cpu].cfs.avg.RunnableAvg, 10),
					fmt.Sprintf("cfs_rq:/.tg_load_avg.%d", cpu):      "0",
					fmt.Sprintf("cfs_rq:/.min_vruntime.%d", cpu):     splitNS(int64(s.cpus[cpu].cfs.q.MinVruntime)),
					fmt.Sprintf("cfs_rq:/.nr_running.%d", cpu):       strconv.Itoa(s.cpus[cpu].cfs.q.NrRunning),
					fmt.Sprintf("cfs_rq:/.throttled.%d", cpu):        "0",
					fmt.Sprintf("cfs_rq:/.removed.load_avg.%d", cpu): strconv.FormatUint(s.cpus[cpu].cfs.removedModel.LoadAvg, 10),
				}
				if c := tg.cfsRq[cpu]; !cfsRqDecayed(c) {
					want[fmt.Sprintf("cfs_rq:/docker.tg_load_avg.%d", cpu)] = strconv.FormatInt(tg.LoadAvg(), 10)
					want[fmt.Sprintf("cfs_rq:/docker.tg_load_avg_contrib.%d", cpu)] = strconv.FormatUint(c.tgLoadAvgContrib, 10)
					want[fmt.Sprintf("cfs_rq:/docker.se->avg.load_avg.%d", cpu)] = strconv.FormatUint(tg.se[cpu].Avg.LoadAvg, 10)
				}
				for k, v := range want {
					if keys[k] != v {
						t.Errorf("lkp key %s = %q, want %q", k, keys[k], v)
					}
				}
			}
			if _, ok := keys["cfs_rq:/docker.tg_load_avg.0"]; !ok && !cfsRqDecayed(tg.cfsRq[0]) {
				t.Error("no cfs_rq:/docker keys")
			}
			lkpReal(t, b.String(), lkpSchedDebug("time: 1\n"+b.String()))
		})
	}
}

// lkpReal runs lkp-tests' own programs/sched_debug/parse on text when
// LKP_SRC and ruby are there, and checks it prints every line of the port.
func lkpReal(t *testing.T, text string, port []string) {
	src := os.Getenv("LKP_SRC")
	ruby, err := exec.LookPath("ruby")
	if src == "" || err != nil {
		return
	}
	cmd := exec.Command(ruby, filepath.Join(src, "programs", "sched_debug", "parse"))
	cmd.Stdin = strings.NewReader("time: 1\n" + text)
	cmd.Env = append(os.Environ(), "LKP_SRC="+src)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("lkp's sched_debug parse: %v", err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		have[l] = true
	}
	for _, l := range port {
		if !have[l] {
			t.Errorf("lkp's parser does not print %q", l)
		}
	}
}
