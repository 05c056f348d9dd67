//go:build cgo

package vk

/*
#include <stdlib.h>
*/
import "C"

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	vulkan "github.com/vulkan-go/vulkan"
)

// pipelineCache is the device's VkPipelineCache and the file backing it.
type pipelineCache struct {
	handle vulkan.PipelineCache
	path   string // "" when the file is disabled
	// dir is the folder of the cache files (resolveCacheDir of
	// Options.PipelineCacheDir), "" when they are disabled.
	dir    string
	loaded []byte // file contents accepted at Open
	saved  []byte // what SavePipelineCache last wrote
	// known holds the digests of the pipelines compiled on this device
	// and driver by any process that kept the cache (the index file
	// beside it, indexPath), and by this one; dirty: this process added
	// some since the index was last written, or the index file was
	// refused and is to be replaced.
	known map[[32]byte]bool
	dirty bool
	// times holds what compiling each pipeline took (RecordCompileTime),
	// from the compile-times file beside the cache (timesPath) and this
	// process; timesDirty: to be written.
	times      map[[32]byte]compileTime
	timesDirty bool
	// lost is why compiled code does not outlive this process
	// (DriverCacheOff), "" where it does: the index is then neither read
	// nor written, since what it lists would be compiled again.
	lost   string
	mu     sync.Mutex
	warn   func(error)
	warned bool
}

// warnf reports a failure of a cache file through Options.Warn, once per
// device, as an error wrapping kind (ErrPipelineCache,
// ErrMeasuredFigures, ErrCacheFolder).
func (c *pipelineCache) warnf(kind error, format string, args ...any) {
	c.warnErr(fmt.Errorf("%w: "+format, append([]any{kind}, args...)...))
}

// warnErr reports err through Options.Warn, unless a warning was given.
func (c *pipelineCache) warnErr(err error) {
	if c.warn == nil || c.warned {
		return
	}
	c.warned = true
	c.warn(err)
}

// PipelineCachePath returns the file that backs the pipeline cache, or ""
// when the cache file is disabled.
func (d *Device) PipelineCachePath() string { return d.cache.path }

// PipelineCacheLoaded reports how many bytes of cache data were loaded from
// the file at Open (0 when there was no usable file).
func (d *Device) PipelineCacheLoaded() int { return len(d.cache.loaded) }

// pipelineCacheFile names the cache file after everything that decides
// whether a driver accepts the data.
func pipelineCacheFile(p *physical) string {
	return fmt.Sprintf("pipeline-cache-%04x-%04x-%08x-%x.bin", p.props.VendorID, p.props.DeviceID,
		p.props.DriverVersion, p.props.PipelineCacheUUID[:])
}

// validCacheHeader checks the VkPipelineCacheHeaderVersionOne at the start
// of data against the device.
func validCacheHeader(data []byte, p *physical) bool {
	if len(data) < 32 {
		return false
	}
	le := binary.NativeEndian
	if hl := le.Uint32(data[0:]); hl < 32 || int(hl) > len(data) {
		return false
	}
	return le.Uint32(data[4:]) == 1 && // VK_PIPELINE_CACHE_HEADER_VERSION_ONE
		le.Uint32(data[8:]) == p.props.VendorID &&
		le.Uint32(data[12:]) == p.props.DeviceID &&
		bytes.Equal(data[16:32], p.props.PipelineCacheUUID[:])
}

// openPipelineCache creates the VkPipelineCache, seeded from the cache file
// when one exists and matches the device.
func (d *Device) openPipelineCache(opt string) error {
	dir, warning := resolveCacheDir(opt)
	if warning != nil {
		d.cache.warnErr(warning)
	}
	d.cache.dir = dir
	d.cache.known = map[[32]byte]bool{}
	d.cache.times = map[[32]byte]compileTime{}
	d.cache.lost = driverCacheOff(d.info)
	if dir != "" {
		d.cache.path = filepath.Join(dir, pipelineCacheFile(d.phys))
		if d.cache.lost == "" {
			d.cache.loadIndex()
		}
		d.cache.loadTimes()
		data, err := readCacheFile(d.cache.path, maxPipelineCacheBytes)
		switch {
		case err == nil && validCacheHeader(data, d.phys):
			d.cache.loaded = data
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			d.cache.warnf(ErrPipelineCache, "%v; compiling without it", err)
		}
	}
	h, err := d.createPipelineCache(d.cache.loaded)
	if err != nil && len(d.cache.loaded) > 0 {
		// The driver refused the data; start empty.
		d.cache.loaded = nil
		h, err = d.createPipelineCache(nil)
	}
	if err != nil {
		return err
	}
	d.cache.handle = h
	d.track("VkPipelineCache", 1)
	return nil
}

func (d *Device) createPipelineCache(initial []byte) (vulkan.PipelineCache, error) {
	ci := vulkan.PipelineCacheCreateInfo{SType: vulkan.StructureTypePipelineCacheCreateInfo}
	if len(initial) > 0 {
		mem := C.CBytes(initial)
		defer C.free(mem)
		ci.InitialDataSize = uint(len(initial))
		ci.PInitialData = mem
	}
	var h vulkan.PipelineCache
	r := vulkan.CreatePipelineCache(d.handle, &ci, nil, &h)
	ci.Free()
	return h, check("vkCreatePipelineCache", r)
}

// pipelineCacheData reads the cache contents.
func (d *Device) pipelineCacheData() ([]byte, error) {
	var size uint
	if err := check("vkGetPipelineCacheData", vulkan.GetPipelineCacheData(d.handle, d.cache.handle, &size, nil)); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, nil
	}
	mem := C.malloc(C.size_t(size))
	if mem == nil {
		return nil, &ResultError{Call: "malloc", Result: vulkan.ErrorOutOfHostMemory}
	}
	defer C.free(mem)
	r := vulkan.GetPipelineCacheData(d.handle, d.cache.handle, &size, mem)
	if r != vulkan.Incomplete {
		if err := check("vkGetPipelineCacheData", r); err != nil {
			return nil, err
		}
	}
	return C.GoBytes(mem, C.int(size)), nil
}

// PipelineCacheHeaderBytes is the size of a pipeline cache's header
// (VkPipelineCacheHeaderVersionOne): cache data no longer than it holds
// no compiled code. Mesa's drivers (lavapipe, radv, anv) give no more:
// they keep compiled code in a disk cache of their own
// (MESA_SHADER_CACHE_DIR), which later processes use as they would the
// file.
const PipelineCacheHeaderBytes = 32

// SavePipelineCache writes the pipeline cache's data to its file now, as
// Close does, when it changed, and returns the size of the data (see
// PipelineCacheHeaderBytes). With the file disabled it writes nothing.
func (d *Device) SavePipelineCache() (n int, err error) {
	defer guard(&err)
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.leave()
	d.cache.mu.Lock()
	defer d.cache.mu.Unlock()
	data, err := d.pipelineCacheData()
	if err != nil {
		return 0, err
	}
	if d.cache.path != "" && len(data) > 0 && !bytes.Equal(data, d.cache.loaded) && !bytes.Equal(data, d.cache.saved) {
		if err := d.cache.save(data); err != nil {
			return len(data), fmt.Errorf("%w: saving %s: %w", ErrPipelineCache, d.cache.path, err)
		}
	}
	if err := d.cache.saveIndex(); err != nil {
		return len(data), fmt.Errorf("%w: saving %s: %w", ErrPipelineCache, d.cache.indexPath(), err)
	}
	if err := d.cache.saveTimes(); err != nil {
		return len(data), fmt.Errorf("%w: saving %s: %w", ErrPipelineCache, d.cache.timesPath(), err)
	}
	return len(data), nil
}

// indexPath is the file of the pipelines compiled with the cache: the
// cache file's name with .pipelines for .bin.
func (c *pipelineCache) indexPath() string {
	return strings.TrimSuffix(c.path, ".bin") + ".pipelines"
}

// loadIndex reads the index file: one pipeline digest in hex a line. A
// missing file is an empty index (a line that is not a digest is
// skipped): it only informs estimates. A file that cannot be read, or is
// refused (readCacheFile), is an empty index too, with a warning; it is
// replaced when the cache is saved.
func (c *pipelineCache) loadIndex() {
	for _, line := range c.readLines(c.indexPath(), maxIndexBytes, &c.dirty) {
		if dg, ok := parseDigest(strings.TrimSpace(line)); ok {
			c.known[dg] = true
		}
	}
}

// readLines reads the lines of a file kept beside the cache (the index,
// the compile times), at most limit bytes: none where it is missing, and
// none with a warning where it cannot be read or is refused
// (readCacheFile), setting *dirty where the file may be replaced when the
// cache is saved.
func (c *pipelineCache) readLines(path string, limit int64, dirty *bool) []string {
	data, err := readCacheFile(path, limit)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.warnf(ErrPipelineCache, "%v; ignored", err)
			*dirty = replaceable(err)
		}
		return nil
	}
	return strings.Split(string(data), "\n")
}

// writeLines writes lines, sorted, the first maxIndexPipelines of them,
// to a file kept beside the cache.
func writeLines(path string, lines []string) error {
	sort.Strings(lines)
	lines = lines[:min(len(lines), maxIndexPipelines)]
	return writeCacheFile(path, []byte(strings.Join(lines, "\n")+"\n"))
}

// parseDigest reads a pipeline digest written in hex.
func parseDigest(s string) (dg [32]byte, ok bool) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(dg) {
		return dg, false
	}
	copy(dg[:], b)
	return dg, true
}

// save writes data, the cache's contents, to the cache file, unless it
// is more than the file may hold (maxPipelineCacheBytes), which a later
// process would refuse. The caller holds c.mu or is Close.
func (c *pipelineCache) save(data []byte) error {
	if len(data) > maxPipelineCacheBytes {
		return fmt.Errorf("the cache holds %s, more than the %s the file may hold; not saved",
			byteSize(int64(len(data))), byteSize(maxPipelineCacheBytes))
	}
	if err := writeCacheFile(c.path, data); err != nil {
		return err
	}
	c.saved = data
	return nil
}

// saveIndex writes the index file when this process added to it, with at
// most maxIndexPipelines digests (the first in order), which is what a
// later process reads. The caller holds c.mu.
func (c *pipelineCache) saveIndex() error {
	if c.path == "" || !c.dirty || c.lost != "" {
		return nil
	}
	lines := make([]string, 0, len(c.known))
	for dg := range c.known {
		lines = append(lines, hex.EncodeToString(dg[:]))
	}
	if err := writeLines(c.indexPath(), lines); err != nil {
		return err
	}
	c.dirty = false
	return nil
}

// compiled records that the pipeline of digest dg was created.
func (c *pipelineCache) compiled(dg [32]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known == nil {
		c.known = map[[32]byte]bool{}
	}
	if !c.known[dg] {
		c.known[dg] = true
		c.dirty = true
	}
}

// PipelineKnown reports whether the pipeline of spec was compiled on this
// device and driver before: by this process, or by one that kept the
// pipeline cache (Options.PipelineCacheDir), whose compiled code the
// driver then finds in that cache or its own. Where the driver's own
// cache is off (DriverCacheOff), only this process's pipelines are
// known. An estimate counts the pipelines a call needs that are not
// known as compile time.
func (d *Device) PipelineKnown(spec PipelineSpec) bool {
	dg := entryDigest(spec)
	d.cache.mu.Lock()
	defer d.cache.mu.Unlock()
	return d.cache.known[dg]
}

// DriverCacheOff returns why the pipelines this process compiles will be
// compiled again by a later one, "" where the driver keeps them: a
// driver of Mesa's (lavapipe, radv, anv), which keeps compiled code in
// a shader cache of its own rather than in the pipeline cache file
// (PipelineCacheHeaderBytes), with that cache turned off
// (MESA_SHADER_CACHE_DISABLE, MESA_GLSL_CACHE_DISABLE, or the folder it
// would use unusable, which this package answers by turning it off).
// The pipeline index (PipelineKnown) is then neither read nor written.
func (d *Device) DriverCacheOff() string { return d.cache.lost }

// closePipelineCache saves the cache (when it changed) and destroys it. A
// cache that cannot be read back or saved is a warning (Options.Warn), not
// an error: the work it would have sped up is done.
func (d *Device) closePipelineCache() error {
	if d.cache.handle == nil {
		return nil
	}
	if d.cache.path != "" && !d.lost.Load() {
		data, err := d.pipelineCacheData()
		switch {
		case err != nil:
			d.cache.warnf(ErrPipelineCache, "reading the cache back: %v", err)
		case len(data) > 0 && !bytes.Equal(data, d.cache.loaded) && !bytes.Equal(data, d.cache.saved):
			if werr := d.cache.save(data); werr != nil {
				d.cache.warnf(ErrPipelineCache, "saving: %v", werr)
			}
		}
		d.cache.mu.Lock()
		if err := d.cache.saveIndex(); err != nil {
			d.cache.warnf(ErrPipelineCache, "saving: %v", err)
		}
		if err := d.cache.saveTimes(); err != nil {
			d.cache.warnf(ErrPipelineCache, "saving: %v", err)
		}
		d.cache.mu.Unlock()
	}
	vulkan.DestroyPipelineCache(d.handle, d.cache.handle, nil)
	d.cache.handle = nil
	d.track("VkPipelineCache", -1)
	return nil
}
