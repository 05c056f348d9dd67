//go:build cgo

package vk

import (
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// compileTime is what compiling one pipeline took (RecordCompileTime):
// ms milliseconds, for a pipeline of class class.
type compileTime struct {
	ms    float64
	class string
}

// Bounds of a kept compile time, in milliseconds (as cost.Device's
// compile_ms: 1 µs to 5 minutes), and of a class name's length.
const (
	minCompileMs, maxCompileMs = 1e-3, 3e5
	maxClassLen                = 64
	// maxTimesBytes is the most the compile-times file may hold:
	// maxIndexPipelines lines of a digest, a time and a class.
	maxTimesBytes = maxIndexPipelines * (2*32 + 1 + 24 + 1 + maxClassLen + 1)
)

// timesPath is the file of the pipelines' compile times: the cache
// file's name with .compile for .bin. It is kept whether or not the
// driver keeps compiled code (DriverCacheOff): a time stays a time.
func (c *pipelineCache) timesPath() string {
	return strings.TrimSuffix(c.path, ".bin") + ".compile"
}

// loadTimes reads the compile-times file: a line per pipeline, its digest
// in hex, its time in milliseconds and its class, separated by spaces. A
// missing file holds none; a line that is not one is skipped; a file
// that cannot be read or is refused (readCacheFile) is none, with a
// warning, and is replaced when the cache is saved.
func (c *pipelineCache) loadTimes() {
	for _, line := range c.readLines(c.timesPath(), maxTimesBytes, &c.timesDirty) {
		f := strings.Fields(line)
		if len(f) != 3 || len(f[2]) > maxClassLen {
			continue
		}
		dg, ok := parseDigest(f[0])
		if !ok {
			continue
		}
		ms, err := strconv.ParseFloat(f[1], 64)
		if err != nil || !(ms >= minCompileMs && ms <= maxCompileMs) {
			continue
		}
		c.times[dg] = compileTime{ms: ms, class: f[2]}
	}
}

// saveTimes writes the compile-times file when this process added to it,
// with at most maxIndexPipelines lines (the first digests in order). The
// caller holds c.mu.
func (c *pipelineCache) saveTimes() error {
	if c.path == "" || !c.timesDirty {
		return nil
	}
	lines := make([]string, 0, len(c.times))
	for dg, t := range c.times {
		lines = append(lines, fmt.Sprintf("%s %s %s", hex.EncodeToString(dg[:]), strconv.FormatFloat(t.ms, 'g', -1, 64), t.class))
	}
	if err := writeLines(c.timesPath(), lines); err != nil {
		return err
	}
	c.timesDirty = false
	return nil
}

// RecordCompileTime keeps what compiling the pipeline of spec took on
// this device and driver, in milliseconds: its creation and, on a device
// that compiles at a pipeline's first dispatch (lavapipe), what that
// dispatch took beyond a later one. class names the kind of kernel
// (letters, digits and punctuation, no spaces, at most 64 bytes), whose
// kept times stand for a pipeline of the class that has none
// (CompileTime). A time outside 1 µs to 5 minutes, or a bad class, is
// not kept. The times are written beside the pipeline cache when it is
// saved (SavePipelineCache, Close), for later processes.
func (d *Device) RecordCompileTime(spec PipelineSpec, class string, ms float64) {
	if !(ms >= minCompileMs && ms <= maxCompileMs) || class == "" || len(class) > maxClassLen || strings.ContainsAny(class, " \t\r\n") {
		return
	}
	dg := entryDigest(spec)
	d.cache.mu.Lock()
	defer d.cache.mu.Unlock()
	if d.cache.times == nil {
		d.cache.times = map[[32]byte]compileTime{}
	}
	d.cache.times[dg] = compileTime{ms: ms, class: class}
	d.cache.timesDirty = true
}

// CompileTime returns what compiling the pipeline of spec takes on this
// device and driver, in milliseconds, from the kept times
// (RecordCompileTime, in this process or an earlier one that kept the
// pipeline cache): its own where one was kept (own), else the median of
// its class's; ok is false where neither was.
func (d *Device) CompileTime(spec PipelineSpec, class string) (ms float64, own, ok bool) {
	dg := entryDigest(spec)
	d.cache.mu.Lock()
	defer d.cache.mu.Unlock()
	if t, ok := d.cache.times[dg]; ok {
		return t.ms, true, true
	}
	var of []float64
	for _, t := range d.cache.times {
		if t.class == class {
			of = append(of, t.ms)
		}
	}
	if len(of) == 0 {
		return 0, false, false
	}
	sort.Float64s(of)
	m := of[len(of)/2]
	if len(of)%2 == 0 {
		m = (of[len(of)/2-1] + m) / 2
	}
	return m, false, !math.IsNaN(m)
}
