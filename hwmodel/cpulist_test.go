package hwmodel

import (
	"slices"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  bool
	}{
		{"", nil, false},
		{"0", []int{0}, false},
		{"0-3", []int{0, 1, 2, 3}, false},
		{"0-1,4,6-7", []int{0, 1, 4, 6, 7}, false},
		{"3,1,2,1", []int{1, 2, 3}, false},
		{" 0-1\n", []int{0, 1}, false},
		{"a", nil, true},
		{"3-1", nil, true},
		{"-1", nil, true},
		{"1-", nil, true},
		{"0-100000", nil, true},
	} {
		got, err := ParseCPUList(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v, err=%v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestFormatCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{5}, "5"},
		{[]int{0, 1, 2, 3, 8, 10, 11}, "0-3,8,10-11"},
		{[]int{3, 1, 2}, "1-3"},
		{[]int{0, 112}, "0,112"},
	} {
		if got := FormatCPUList(tc.in); got != tc.want {
			t.Errorf("FormatCPUList(%v) = %q, want %q", tc.in, got, tc.want)
		}
		back, err := ParseCPUList(tc.want)
		if err != nil || FormatCPUList(back) != tc.want {
			t.Errorf("round trip of %q: %v %v", tc.want, back, err)
		}
	}
}

func TestFormatCPUMask(t *testing.T) {
	for _, tc := range []struct {
		cpus []int
		nr   int
		want string
	}{
		{[]int{0, 1}, 2, "3"},
		{[]int{0, 1, 2, 3}, 8, "0f"},
		{[]int{0, 4}, 8, "11"},
		{[]int{32}, 40, "01,00000000"},
		{[]int{0, 112}, 224, "00000000,00000000,00000000,00010000,00000000,00000000,00000001"},
	} {
		if got := FormatCPUMask(tc.cpus, tc.nr); got != tc.want {
			t.Errorf("FormatCPUMask(%v, %d) = %q, want %q", tc.cpus, tc.nr, got, tc.want)
		}
	}
}
