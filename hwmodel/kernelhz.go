package hwmodel

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// The host's tick rate. The kernel's CONFIG_HZ is not visible in /proc's
// times (USER_HZ, always 100), but the running kernel's own configuration
// is, where it was built with CONFIG_IKCONFIG_PROC: /proc/config.gz is
// that kernel's .config, compressed. Distributions ship it as
// /boot/config-RELEASE instead, which names the release it was built for
// (uname -r). Either gives CONFIG_HZ; without both the preset's hz stands
// and a note says so.

// kernelConfigHZ reads CONFIG_HZ from a kernel .config's text: 0 when the
// text has no valid CONFIG_HZ line (a tick of 100 to 1000 Hz, as
// kernel/Kconfig.hz offers).
func kernelConfigHZ(config io.Reader) int {
	sc := bufio.NewScanner(config)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "CONFIG_HZ=")
		if !ok {
			continue
		}
		hz, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || hz < 100 || hz > 1000 {
			return 0
		}
		return hz
	}
	return 0
}

// kernelHZ is CONFIG_HZ from the running kernel's configuration: procGz
// (/proc/config.gz's bytes) first, then boot (/boot/config-RELEASE's text),
// with a note naming the source or why there is none. Either may be nil.
func kernelHZ(procGz, boot []byte, release string) (int, string) {
	if procGz != nil {
		if zr, err := gzip.NewReader(bytes.NewReader(procGz)); err == nil {
			if hz := kernelConfigHZ(zr); hz > 0 {
				return hz, fmt.Sprintf("hz %d from /proc/config.gz (the running kernel's CONFIG_HZ)", hz)
			}
		}
	}
	if boot != nil {
		if hz := kernelConfigHZ(bytes.NewReader(boot)); hz > 0 {
			return hz, fmt.Sprintf("hz %d from /boot/config-%s (CONFIG_HZ)", hz, release)
		}
	}
	return 0, "hz is the preset's: neither /proc/config.gz nor /boot/config-" + release + " gives CONFIG_HZ"
}

// runningKernelHZ reads this machine's kernel configuration (kernelHZ) and
// appends its note to notes.
func runningKernelHZ(notes []string) (int, []string) {
	procGz, _ := os.ReadFile("/proc/config.gz")
	release := ""
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		release = strings.TrimSpace(string(b))
	}
	var boot []byte
	if release != "" {
		boot, _ = os.ReadFile("/boot/config-" + release)
	}
	hz, note := kernelHZ(procGz, boot, release)
	return hz, append(notes, note)
}
