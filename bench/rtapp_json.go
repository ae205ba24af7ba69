package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The ordered JSON reader of rt-app descriptions (rtapp.go): json-c keeps
// an object's keys in file order, duplicates included, and rt-app relies on
// it (events run in file order; two "run" keys run twice), which
// encoding/json's maps lose. Errors name the file, line, column and offset.

type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNum
	jStr
	jArr
	jObj
)

func (k jkind) String() string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

// jnode is a JSON value that keeps its object keys in file order, with
// duplicates (encoding/json's maps would lose both).
type jnode struct {
	kind jkind
	off  int64 // where the value starts in the input
	b    bool
	num  json.Number
	str  string
	arr  []*jnode
	obj  []jfield
}

type jfield struct {
	key string
	val *jnode
}

type jparser struct {
	dec   *json.Decoder
	src   []byte
	file  string
	depth int
}

// rtMaxFile bounds the size of an rt-app file (its grammar makes a
// thousand-task description a few hundred KiB).
const rtMaxFile = 64 << 20

// readRtFile reads an rt-app file ("-": stdin) and names it for messages.
func readRtFile(name string) (src []byte, label string, err error) {
	if name == "-" {
		src, err = readAtMost(os.Stdin, rtMaxFile)
		return src, "<stdin>", err
	}
	f, err := os.Open(name)
	if err == nil {
		src, err = readAtMost(f, rtMaxFile)
		f.Close()
	}
	return src, filepath.Base(name), err
}

// readAtMost reads r to its end, failing beyond max bytes.
func readAtMost(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err == nil && int64(len(b)) > max {
		return nil, fmt.Errorf("longer than %d MiB", max>>20)
	}
	return b, err
}

// jMaxDepth bounds the nesting of arrays and objects (rt-app's grammar
// needs five levels; the parser is recursive).
const jMaxDepth = 64

// parseOrdered decodes one JSON value with the Decoder's Token API.
func parseOrdered(file string, src []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	p := &jparser{dec: dec, src: src, file: file}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	off := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		if err != nil {
			return nil, p.syntax(err)
		}
		return nil, p.malformed(off, "unexpected data after the top-level object")
	}
	return v, nil
}

func (p *jparser) value() (*jnode, error) {
	off := p.dec.InputOffset()
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.syntax(err)
	}
	n := &jnode{off: off}
	switch t := tok.(type) {
	case json.Delim:
		if p.depth++; p.depth > jMaxDepth {
			return nil, p.malformed(off, "nested deeper than %d arrays and objects", jMaxDepth)
		}
		defer func() { p.depth-- }()
		switch t {
		case '{':
			n.kind = jObj
			for p.dec.More() {
				kt, err := p.dec.Token()
				if err != nil {
					return nil, p.syntax(err)
				}
				key, _ := kt.(string) // the decoder only returns string keys
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				n.obj = append(n.obj, jfield{key, v})
			}
		case '[':
			n.kind = jArr
			for p.dec.More() {
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, v)
			}
		default:
			return nil, p.malformed(off, "unexpected %q", t)
		}
		if _, err := p.dec.Token(); err != nil { // the closing delimiter
			return nil, p.syntax(err)
		}
	case string:
		n.kind, n.str = jStr, t
	case json.Number:
		n.kind, n.num = jNum, t
	case bool:
		n.kind, n.b = jBool, t
	case nil:
		n.kind = jNull
	}
	return n, nil
}

// lineCol is the position of the first non-blank byte at or after off
// (InputOffset points before the separators and blanks that precede a
// value).
func lineCol(src []byte, off int64) (int, int) {
	for off < int64(len(src)) && strings.IndexByte(" \t\r\n,:", src[off]) >= 0 {
		off++
	}
	off = min(off, int64(len(src)))
	line := 1 + bytes.Count(src[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(src[:off], '\n')
	return line, col
}

func (p *jparser) malformed(off int64, format string, args ...any) error {
	line, col := lineCol(p.src, off)
	return flagErr("-f", "%s:%d:%d (offset %d): malformed JSON: %s", p.file, line, col, off, fmt.Sprintf(format, args...))
}

func (p *jparser) syntax(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := max(se.Offset-1, 0)
		line := 1 + bytes.Count(p.src[:min(off, int64(len(p.src)))], []byte("\n"))
		col := int(off) - bytes.LastIndexByte(p.src[:min(off, int64(len(p.src)))], '\n')
		return flagErr("-f", "%s:%d:%d (offset %d): malformed JSON: %v", p.file, line, col, se.Offset, se)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return p.malformed(int64(len(p.src)), "unexpected end of input (unclosed object or array?)")
	}
	return p.malformed(p.dec.InputOffset(), "%v", err)
}
