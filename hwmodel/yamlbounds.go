package hwmodel

import (
	"fmt"
	"strings"
)

// yamlBounds are what a spec or calibration document may hold before the
// YAML library reads it: go.yaml.in/yaml/v3 checks a mapping's keys
// against each other (quadratic in its keys: 40,000 take seconds) and
// builds a node per nesting level, so a 16 MiB document could otherwise
// take minutes or gigabytes to be rejected.
type yamlBounds struct {
	depth int // nested collections, block and flow together
	keys  int // keys of one mapping
	items int // items of one sequence
}

// specBounds fit the largest spec there is: an explicit 8192-CPU list
// (8192 items), costs_cycles' ~30 keys, five levels of nesting.
var specBounds = yamlBounds{depth: 16, keys: 256, items: 8192}

// yamlFrame is an open collection: a block one at column col, or a flow
// one ([ or {).
type yamlFrame struct {
	col   int
	seq   bool
	flow  bool
	count int
	line  int
}

// checkYAMLBounds scans a document's structure (indentation, "- "
// items, "key:" keys, flow brackets and commas, outside quotes, comments
// and block scalars) and reports the first bound it exceeds, with its
// line. It over-approximates where it cannot tell (a colon in a plain
// scalar counts as a key), which only matters near the bounds.
func checkYAMLBounds(data []byte, b yamlBounds) error {
	var stack []yamlFrame
	flowDepth := 0
	blockScalar := -1 // the indentation a block scalar's lines exceed
	quote := byte(0)  // an open quoted scalar continued on the next line
	add := func(f *yamlFrame, line int) error {
		f.count++
		switch {
		case f.seq && f.count > b.items:
			return fmt.Errorf("line %d: a list of more than %d items (allowed: at most %d; the list began on line %d)", line, b.items, b.items, f.line)
		case !f.seq && f.count > b.keys:
			return fmt.Errorf("line %d: a mapping of more than %d keys (allowed: at most %d; the mapping began on line %d)", line, b.keys, b.keys, f.line)
		}
		return nil
	}
	push := func(f yamlFrame) error {
		stack = append(stack, f)
		if len(stack) > b.depth {
			return fmt.Errorf("line %d: nested deeper than %d levels (allowed: at most %d)", f.line, b.depth, b.depth)
		}
		return nil
	}
	// block opens or continues the block collection of an item or key
	// at column col.
	block := func(col int, seq bool, line int) error {
		for len(stack) > 0 && stack[len(stack)-1].col > col {
			stack = stack[:len(stack)-1]
		}
		if n := len(stack); n > 0 && stack[n-1].col == col && stack[n-1].seq && !seq {
			// "key:\n- a\nnext:": a sequence at its key's indentation
			// ends at the next key.
			stack = stack[:n-1]
		}
		if n := len(stack); n > 0 && stack[n-1].col == col && stack[n-1].seq == seq {
			return add(&stack[n-1], line)
		}
		if err := push(yamlFrame{col: col, seq: seq, line: line}); err != nil {
			return err
		}
		return add(&stack[len(stack)-1], line)
	}
	for ln, text := range strings.Split(string(data), "\n") {
		line := ln + 1
		text = strings.TrimRight(text, "\r")
		indent := len(text) - len(strings.TrimLeft(text, " "))
		rest := text[indent:]
		if blockScalar >= 0 {
			if strings.TrimSpace(rest) == "" || indent > blockScalar {
				continue
			}
			blockScalar = -1
		}
		i := indent
		if quote == 0 && flowDepth == 0 {
			if rest == "" || rest[0] == '#' || strings.HasPrefix(rest, "---") || strings.HasPrefix(rest, "...") {
				continue
			}
			// "- " items, possibly several on one line ("- - a").
			for i < len(text) && text[i] == '-' && (i+1 == len(text) || text[i+1] == ' ') {
				if err := block(i, true, line); err != nil {
					return err
				}
				i++
				for i < len(text) && text[i] == ' ' {
					i++
				}
			}
			if k := keyColon(text[i:]); k >= 0 {
				if err := block(i, false, line); err != nil {
					return err
				}
				i += k + 1
				for i < len(text) && text[i] == ' ' {
					i++
				}
			}
			if i < len(text) && (text[i] == '|' || text[i] == '>') {
				blockScalar = indent
				continue
			}
		}
		// The value: flow collections (anywhere in flow context, at the
		// value's start in block context), quotes and comments.
		start := i
		for ; i < len(text); i++ {
			c := text[i]
			if quote != 0 {
				switch {
				case quote == '"' && c == '\\':
					i++
				case c == quote && quote == '\'' && i+1 < len(text) && text[i+1] == '\'':
					i++
				case c == quote:
					quote = 0
				}
				continue
			}
			switch {
			case c == '#' && (i == 0 || text[i-1] == ' ' || text[i-1] == '\t'):
				i = len(text)
			case (c == '"' || c == '\'') && (flowDepth > 0 || i == start):
				quote = c
			case (c == '[' || c == '{') && (flowDepth > 0 || i == start):
				flowDepth++
				if err := push(yamlFrame{seq: c == '[', flow: true, line: line}); err != nil {
					return err
				}
			case (c == ']' || c == '}') && flowDepth > 0:
				// A flow collection's entries are its commas plus one.
				flowDepth--
				if !emptyBefore(text[:i]) {
					if err := add(&stack[len(stack)-1], line); err != nil {
						return err
					}
				}
				stack = stack[:len(stack)-1]
			case c == ',' && flowDepth > 0:
				if err := add(&stack[len(stack)-1], line); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// emptyBefore says whether the text before a closing bracket ends with
// its opening one: an empty flow collection holds no item.
func emptyBefore(s string) bool {
	s = strings.TrimRight(s, " \t")
	return strings.HasSuffix(s, "[") || strings.HasSuffix(s, "{")
}

// keyColon is the index of a block mapping key's colon in s (a colon
// followed by a space or the end, before any quote or comment), or -1.
func keyColon(s string) int {
	if s == "" || s[0] == '[' || s[0] == '{' || s[0] == '#' {
		return -1
	}
	i := 0
	if q := s[0]; q == '"' || q == '\'' {
		// A quoted key: its colon follows the closing quote.
		end := strings.IndexByte(s[1:], q)
		if end < 0 {
			return -1
		}
		i = end + 2
		if i < len(s) && s[i] == ':' && (i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\t') {
			return i
		}
		return -1
	}
	for ; i < len(s); i++ {
		switch s[i] {
		case '#':
			if i > 0 && s[i-1] == ' ' {
				return -1
			}
		case ':':
			if i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\t' {
				return i
			}
		}
	}
	return -1
}
