package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// -json is the same bytes from either driver, but for the keys the README
// and -h name as host- or driver-dependent: host.*, config.driver and
// config.args.
func TestRunJSONDriversAgree(t *testing.T) {
	for _, w := range [][]string{
		{"-workload", "hackbench", "-g", "2", "-f", "5", "-l", "20", "-cgroup", "docker"},
		{"-workload", "netperf", "-t", "UDP_RR", "-nr", "4", "-l", "0.002"},
	} {
		docs := map[string]map[string]any{}
		for _, d := range [][]string{{"-driver", "serial"}, {"-driver", "parallel", "-workers", "2"}} {
			args := append(append([]string{"run", "-topo", "hikey-8", "-json", "-progress=false"}, d...), w...)
			code, out, errs := runEmu(args...)
			if code != 0 {
				t.Fatalf("emu %v: exit %d: %s", args, code, errs)
			}
			var doc map[string]any
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			cfg := doc["config"].(map[string]any)
			if cfg["driver"] != d[1] || cfg["args"] == nil || doc["host"].(map[string]any)["host_seconds"] == nil {
				t.Errorf("%v: config.driver %v, config.args %v, host %v", d, cfg["driver"], cfg["args"], doc["host"])
			}
			delete(doc, "host")
			delete(cfg, "driver")
			delete(cfg, "args")
			docs[d[1]] = doc
		}
		if !reflect.DeepEqual(docs["serial"], docs["parallel"]) {
			a, _ := json.MarshalIndent(docs["serial"], "", " ")
			b, _ := json.MarshalIndent(docs["parallel"], "", " ")
			t.Errorf("%v: -json differs between the drivers beyond host, config.driver and config.args:\n%s\n---\n%s", w, a, b)
		}
	}
	// The keys are named where a newcomer looks: -h.
	_, _, errs := runEmu("run", "-h")
	for _, k := range []string{"host.*", "config.driver", "config.args"} {
		if !strings.Contains(errs, k) {
			t.Errorf("emu run -h does not name %s as host- or driver-dependent", k)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, a := range []string{"--version", "-version", "version"} {
		code, out, _ := runEmu(a)
		if code != 0 || !strings.HasPrefix(out, "emu github.com/rqemu/rqemu ") || !strings.Contains(out, "commit ") {
			t.Errorf("emu %s: exit %d, %q", a, code, out)
		}
	}
}

// emu help CMD is CMD's usage, emu help the top level, both on stdout.
func TestHelpCommand(t *testing.T) {
	code, out, _ := runEmu("help")
	if code != 0 || !strings.Contains(out, "usage: emu COMMAND") {
		t.Errorf("emu help: exit %d, %q", code, out)
	}
	for _, c := range commands {
		code, out, _ := runEmu("help", c.name)
		if code != 0 || !strings.Contains(out, "usage: emu "+c.name) {
			t.Errorf("emu help %s: exit %d, %q", c.name, code, out)
		}
	}
	if code, _, errs := runEmu("help", "nosuch"); code != 2 || !strings.Contains(errs, `unknown command "nosuch"`) {
		t.Errorf("emu help nosuch: exit %d, %q", code, errs)
	}
}

// run -workload X -h lists the engine's flags and the workload's in two
// groups, the workload's aliases on one line; -topo names host once.
func TestRunHelpGroups(t *testing.T) {
	code, _, errs := runEmu("run", "-workload", "hackbench", "-h")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	eng := strings.Index(errs, "\nengine flags:\n")
	wl := strings.Index(errs, "\nworkload flags (hackbench):\n")
	if eng < 0 || wl < eng {
		t.Fatalf("no engine group then workload group:\n%s", errs)
	}
	engine, work := errs[eng:wl], errs[wl:]
	for _, f := range []string{"  -topo string", "  -seed uint", "  -json\n"} {
		if !strings.Contains(engine, f) {
			t.Errorf("engine group lacks %q", f)
		}
	}
	for _, f := range []string{"  -g, --groups int", "  -T, --threads\n", "  -P, --process, --processes\n", "  -cgroup string"} {
		if !strings.Contains(work, f) {
			t.Errorf("workload group lacks %q:\n%s", f, work)
		}
	}
	if strings.Contains(work, "-topo") || strings.Contains(engine, "-groups") {
		t.Error("a flag in the wrong group")
	}
	if strings.Contains(errs, "netperf UDP_RR") {
		t.Error("-workload hackbench -h lists the other workloads")
	}
	topo := errs[strings.Index(errs, "  -topo string"):]
	topo = topo[:strings.Index(topo, "(default")]
	if n := strings.Count(topo, "host"); n != 1 {
		t.Errorf("-topo help names host %d times: %q", n, topo)
	}
}

// The real tools' spellings through the CLI: the same bytes as the
// canonical flags; schbench -j FILE and -j - (text then on stderr);
// sysbench's positional test and command.
func TestRunToolSpellings(t *testing.T) {
	base := []string{"run", "-topo", "hikey-8", "-progress=false"}
	_, a, _ := runEmu(append(base, "-workload", "hackbench", "-g2", "-f5", "-Tpl20")...)
	_, b, _ := runEmu(append(base, "-workload", "hackbench", "-g", "2", "-f", "5", "-T", "-p", "-l", "20")...)
	if a != b || !strings.Contains(a, "Running in threaded mode with 2 groups using 10 file descriptors each (== 20 tasks)") {
		t.Errorf("hackbench -g2 -f5 -Tpl20 differs from -g 2 -f 5 -T -p -l 20:\n%s\n---\n%s", a, b)
	}
	file := filepath.Join(t.TempDir(), "sch.json")
	code, text, errs := runEmu(append(base, "-workload", "schbench", "--message-threads", "2", "--threads=2", "--runtime", "1", "-j", file)...)
	raw, err := os.ReadFile(file)
	if code != 0 || err != nil || !strings.Contains(text, "average rps:") {
		t.Fatalf("schbench -j FILE: exit %d, %v: %s", code, err, errs)
	}
	var doc struct {
		Normal map[string]string  `json:"normal"`
		Int    map[string]float64 `json:"int"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc.Normal["cmdline"] != "schbench --message-threads 2 --threads=2 --runtime 1 -j "+file ||
		doc.Normal["hostname"] != "hikey-8" || doc.Int["runtime"] != 1 {
		t.Errorf("schbench -j: %v %s", err, raw)
	}
	code, out, errs := runEmu(append(base, "-workload", "schbench", "-m2", "-t2", "-r1", "-j", "-")...)
	if code != 0 || !strings.HasPrefix(out, `{"normal": {`) || strings.Contains(out, "average rps") || !strings.Contains(errs, "average rps:") {
		t.Errorf("schbench -j -: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runEmu(append(base, "-workload", "sysbench", "--threads=2", "oltp_read_write", "--time=0.005", "run")...)
	if code != 0 || !strings.HasPrefix(out, "sysbench 1.0.20") || !strings.Contains(out, "Number of threads: 2\n") {
		t.Errorf("sysbench oltp_read_write run: exit %d, %q %s", code, out, errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-workload", "sysbench", "oltp_read_write", "cleanup"}, `command "cleanup" is not emulated`},
		{[]string{"-workload", "schbench", "-j", "-", "-json"}, "-j -: stdout is -json's"},
		{[]string{"-workload", "schbench", "-j", t.TempDir()}, "-j: "},
		{[]string{"-workload", "hackbench", "-Tq"}, "-Tq"},
	} {
		code, _, errs := runEmu(append(base, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("emu run %v: exit %d, %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}
