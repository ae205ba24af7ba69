package main

import (
	"errors"
	"io/fs"
	"syscall"

	"github.com/rqemu/rqemu/hwmodel"
)

// isInputError reports whether err is the user's bad input rather than a
// failure of the run: a malformed spec, an unknown topology, a missing or
// unreadable file, a directory given for a file.
func isInputError(err error) bool {
	var se *hwmodel.SpecError
	var ue *hwmodel.UnknownError
	return errors.As(err, &se) || errors.As(err, &ue) || errors.Is(err, fs.ErrNotExist) ||
		errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EISDIR)
}
