//go:build !linux

package atomicfile

import (
	"errors"
	"os"
)

// disableUnnamed has no effect where there are no unnamed files.
var disableUnnamed bool

// openUnnamed reports that the system has no unnamed files.
func openUnnamed(dir string) (*os.File, error) { return nil, nil }

// linkUnnamed is never called where openUnnamed returns no file.
func linkUnnamed(f *os.File, path string) error {
	return errors.New("atomicfile: no unnamed files here")
}
