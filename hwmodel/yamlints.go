package hwmodel

import (
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// checkWholeNumbers reports a number with a fraction or an exponent (a
// !!float: 2.9, 1e3, .nan) written where t has an integer field, which
// go.yaml.in/yaml/v3 would truncate without a word (sockets: 2.9 is 2).
// n is the document as a node tree, t the type it decodes into; the
// error names the field as SpecError does.
func checkWholeNumbers(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if err := checkWholeNumbers(c, t, path); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		if t.Kind() != reflect.Struct {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f, ok := yamlField(t, k.Value)
			if !ok {
				continue
			}
			name := k.Value
			if path != "" {
				name = path + "." + k.Value
			}
			if err := checkWholeNumbers(v, f.Type, name); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return nil
		}
		for i, c := range n.Content {
			if err := checkWholeNumbers(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		switch t.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if n.ShortTag() == "!!float" {
				return &SpecError{Field: path, Msg: fmt.Sprintf("%s is not a whole number (allowed: an integer, such as %s)", n.Value, wholeExample(n.Value))}
			}
		}
	}
	return nil
}

// yamlField is t's field whose yaml tag names key.
func yamlField(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// wholeExample is v without its fraction, for the error's example.
func wholeExample(v string) string {
	if w, _, ok := strings.Cut(v, "."); ok && w != "" && w != "-" && w != "+" {
		return w
	}
	return "2"
}
