package hwmodel

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

//go:embed presets/*.yaml
var presetFS embed.FS

// HostPreset is the name of the detected host machine.
const HostPreset = "host"

// PresetNames lists the built-in machines, "host" last.
func PresetNames() []string {
	entries, _ := fs.ReadDir(presetFS, "presets")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	slices.Sort(names)
	return append(names, HostPreset)
}

// PresetSpec returns the raw spec file of a built-in preset (not "host"),
// for users to copy and edit.
func PresetSpec(name string) ([]byte, error) {
	data, err := presetFS.ReadFile("presets/" + name + ".yaml")
	if err != nil {
		return nil, unknownTopo(name)
	}
	return data, nil
}

// UnknownError is a name that matches no preset.
type UnknownError struct{ Name string }

func (e *UnknownError) Error() string {
	return fmt.Sprintf("unknown topology %q (allowed: %s, or a spec file path)", e.Name, strings.Join(PresetNames(), ", "))
}

func unknownTopo(name string) error { return &UnknownError{Name: name} }

// LoadOptions tune Load.
type LoadOptions struct {
	// Calib, if set, is a calibration file applied to the host preset.
	Calib string
	// Hammer fits the calibration's burst (weave.PredictHammer); needed
	// with Calib.
	Hammer HammerFunc
	// Edit, if set, changes the decoded spec of a preset or spec file
	// before Build, in memory (emu fit's candidate values: Spec.SetValue);
	// the host preset, detected rather than decoded, refuses it.
	Edit func(*Spec) error
}

// Load returns the machine named by a preset name, "host", or the path of
// a spec file (anything containing a path separator or ending in .yaml,
// .yml or .json).
func Load(nameOrFile string, opt LoadOptions) (*Machine, error) {
	var m *Machine
	var err error
	edit := func(s *Spec) (*Machine, error) {
		if opt.Edit != nil {
			if err := opt.Edit(s); err != nil {
				return nil, err
			}
		}
		return Build(s)
	}
	switch {
	case nameOrFile == HostPreset:
		if opt.Edit != nil {
			return nil, &SpecError{Field: "(edit)", Msg: "applies to presets and spec files, not the detected host"}
		}
		m, err = DetectHost()
	case strings.ContainsRune(nameOrFile, os.PathSeparator) || hasSpecExt(nameOrFile):
		var s *Spec
		if s, err = LoadSpecFile(nameOrFile); err == nil {
			m, err = edit(s)
			if err != nil {
				err = fmt.Errorf("%s: %w", nameOrFile, err)
			}
		}
	default:
		var data []byte
		if data, err = PresetSpec(nameOrFile); err == nil {
			var s *Spec
			if s, err = DecodeSpec(bytes.NewReader(data)); err == nil {
				m, err = edit(s)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if opt.Calib != "" {
		if nameOrFile != HostPreset {
			return nil, &SpecError{Field: "-calib", Msg: fmt.Sprintf("applies to the host preset only, not %q", nameOrFile)}
		}
		c, err := LoadCalibFile(opt.Calib)
		if err != nil {
			return nil, &SpecError{Field: "-calib", Msg: err.Error()}
		}
		if opt.Hammer == nil {
			panic("hwmodel: Load: LoadOptions.Calib without Hammer (weave.PredictHammer)")
		}
		if m, err = c.Apply(m, opt.Hammer); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func hasSpecExt(s string) bool {
	for _, ext := range []string{".yaml", ".yml", ".json"} {
		if strings.HasSuffix(s, ext) {
			return true
		}
	}
	return false
}
