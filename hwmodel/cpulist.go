package hwmodel

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseCPUList parses the kernel's cpulist syntax ("0-3,8,10-11"), as
// printed by sysfs *_list files and lib/bitmap.c: bitmap_print_to_pagebuf(),
// into a sorted list without duplicates. The empty string is the empty set.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad cpu list %q: %q is not a CPU number", s, lo)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(hi)
			if err != nil || b < a {
				return nil, fmt.Errorf("bad cpu list %q: range %q", s, part)
			}
		}
		if b-a > 1<<16 {
			return nil, fmt.Errorf("bad cpu list %q: range %q too large", s, part)
		}
		if len(out)+(b-a) > 1<<16 {
			return nil, fmt.Errorf("bad cpu list %q: more than %d CPUs", s, 1<<16)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// FormatCPUList prints a set of CPUs in cpulist syntax with ranges, the
// inverse of ParseCPUList. The input need not be sorted.
func FormatCPUList(cpus []int) string {
	c := slices.Clone(cpus)
	slices.Sort(c)
	c = slices.Compact(c)
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(c[j]))
		}
		i = j + 1
	}
	return b.String()
}

// FormatCPUMask prints a set of CPUs as the kernel's hexadecimal cpumask
// ("%*pb"), in comma-separated 32-bit words, most significant first, as
// /proc/schedstat's domain lines print it. nr is the number of possible CPUs.
func FormatCPUMask(cpus []int, nr int) string {
	words := (nr + 31) / 32
	if words == 0 {
		words = 1
	}
	w := make([]uint32, words)
	for _, c := range cpus {
		w[c/32] |= 1 << (c % 32)
	}
	var b strings.Builder
	for i := words - 1; i >= 0; i-- {
		if i == words-1 {
			// The top word is printed with only as many digits as
			// the remaining CPUs need.
			digits := ((nr - 32*i) + 3) / 4
			if digits < 1 {
				digits = 1
			}
			fmt.Fprintf(&b, "%0*x", digits, w[i])
		} else {
			fmt.Fprintf(&b, ",%08x", w[i])
		}
	}
	return b.String()
}
