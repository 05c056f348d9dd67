//go:build cgo

package vk

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPipelineDeviceCache(t *testing.T) {
	d := openTest(t, Options{})
	spec := PipelineSpec{SPIRV: histogramSPV, Bindings: 2, PushConstantSize: 8, SpecConstants: []uint32{16}}
	// Concurrent requests for one pipeline share a single creation.
	var wg sync.WaitGroup
	got := make([]*Pipeline, 4)
	for i := range got {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			p, err := d.NewPipeline(spec)
			assert.NoError(t, err)
			got[i] = p
		}(i)
	}
	wg.Wait()
	for _, p := range got[1:] {
		assert.Same(t, got[0], p)
	}
	assert.Equal(t, 1, d.LiveObjects()["VkPipeline"])
	assert.Equal(t, "main", got[0].Spec().Entry)

	other, err := d.NewPipeline(PipelineSpec{SPIRV: histogramSPV, Bindings: 2, PushConstantSize: 8, SpecConstants: []uint32{17}})
	require.NoError(t, err)
	assert.NotSame(t, got[0], other)
	assert.Equal(t, 2, d.LiveObjects()["VkPipeline"])

	// A closed pipeline leaves the cache; asking again builds a new one.
	require.NoError(t, other.Close())
	again, err := d.NewPipeline(PipelineSpec{SPIRV: histogramSPV, Bindings: 2, PushConstantSize: 8, SpecConstants: []uint32{17}})
	require.NoError(t, err)
	assert.NotSame(t, other, again)

	_, err = d.NewPipeline(PipelineSpec{SPIRV: copySPV, Entry: "nope", Bindings: 2, PushConstantSize: 8})
	require.Error(t, err, "unknown entry point")
	assert.Contains(t, err.Error(), `"nope"`)
	_, err = d.NewPipeline(PipelineSpec{SPIRV: copySPV, Bindings: 1, PushConstantSize: 8})
	require.Error(t, err, "the shader uses more bindings than declared")
	assert.Contains(t, err.Error(), "binding 1")
}

func TestPipelineCacheFile(t *testing.T) {
	dir := t.TempDir()
	specs := []PipelineSpec{
		{SPIRV: copySPV, Bindings: 2, PushConstantSize: 8, SpecConstants: []uint32{64}},
		{SPIRV: histogramSPV, Bindings: 2, PushConstantSize: 8, SpecConstants: []uint32{16}},
		{SPIRV: scatterAddSPV, Bindings: 3, PushConstantSize: 4},
		{SPIRV: spinSPV, Bindings: 1, PushConstantSize: 8},
	}
	run := func(t *testing.T) (open, pipelines time.Duration, d *Device) {
		start := time.Now()
		d = openTest(t, Options{PipelineCacheDir: dir})
		open = time.Since(start)
		start = time.Now()
		for _, spec := range specs {
			_, err := d.NewPipeline(spec)
			require.NoError(t, err)
		}
		return open, time.Since(start), d
	}

	var cold, warm time.Duration
	var path string
	t.Run("cold", func(t *testing.T) {
		open, pipes, d := run(t)
		path = d.PipelineCachePath()
		assert.Equal(t, dir, filepath.Dir(path))
		assert.Equal(t, 0, d.PipelineCacheLoaded())
		_, err := os.Stat(path)
		assert.True(t, os.IsNotExist(err), "the file is written at Close")
		cold = open + pipes
		t.Logf("cold: Open %v, 4 pipelines %v", open, pipes)
	})
	st, err := os.Stat(path)
	require.NoError(t, err, "Close saved the pipeline cache")
	require.NotZero(t, st.Size())
	t.Logf("pipeline cache file: %d bytes", st.Size())
	tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp*"))
	assert.Empty(t, tmps, "no temporary files are left behind")

	t.Run("warm", func(t *testing.T) {
		open, pipes, d := run(t)
		assert.Equal(t, int(st.Size()), d.PipelineCacheLoaded(), "Open loads the saved cache")
		warm = open + pipes
		t.Logf("warm: Open %v, 4 pipelines %v", open, pipes)
	})
	t.Logf("Open+pipelines: cold %v, warm %v", cold, warm)

	// A corrupt file is ignored.
	require.NoError(t, os.WriteFile(path, []byte("garbage that is not a pipeline cache header"), 0o644))
	d := openTest(t, Options{PipelineCacheDir: dir})
	assert.Equal(t, 0, d.PipelineCacheLoaded())

	off := openTest(t, Options{PipelineCacheDir: "off"})
	assert.Empty(t, off.PipelineCachePath())
}

func TestPipelineCacheDefaultDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", home)
	d := openTest(t, Options{PipelineCacheDir: ""})
	// openTest maps "" to "off"; open the default location directly.
	require.NoError(t, d.Close())
	d2, err := Open(Options{Validation: true})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(home, "gpuscatter"), filepath.Dir(d2.PipelineCachePath()))
	_, err = d2.NewPipeline(PipelineSpec{SPIRV: copySPV, Bindings: 2, PushConstantSize: 8})
	require.NoError(t, err)
	require.NoError(t, d2.Close())
	assert.Empty(t, d2.ValidationMessages())
	assert.Empty(t, d2.LiveObjects())
	_, err = os.Stat(d2.PipelineCachePath())
	assert.NoError(t, err)
}

// TestPipelineCreationSurvivesGC creates pipelines with specialization
// constants while garbage collections run back to back: the create info
// must stay valid for the whole vkCreateComputePipelines call (see
// gspipe.h), whatever the collector does.
func TestPipelineCreationSurvivesGC(t *testing.T) {
	d := openTest(t, Options{})
	gcStorm(t)
	for bins := uint32(1); bins <= 200; bins++ {
		p, err := d.NewPipeline(PipelineSpec{SPIRV: histogramSPV, Bindings: 2, PushConstantSize: 8, SpecConstants: []uint32{bins}})
		require.NoError(t, err)
		require.NoError(t, p.Close())
	}
}

// TestPipelineCacheUnwritableWarns: a cache folder that cannot be created
// (a file is in the way) is one warning through Options.Warn; Close still
// succeeds, as does the next device on the same folder.
func TestPipelineCacheUnwritableWarns(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for range 2 {
		var warnings []error
		d, err := Open(Options{PipelineCacheDir: filepath.Join(file, "cache"),
			Warn: func(err error) { warnings = append(warnings, err) }})
		require.NoError(t, err)
		_, err = d.NewPipeline(PipelineSpec{SPIRV: copySPV, Bindings: 2, PushConstantSize: 8})
		require.NoError(t, err)
		require.NoError(t, d.Close(), "the cache is an optimisation: Close does not fail for it")
		require.Len(t, warnings, 1)
		require.ErrorIs(t, warnings[0], ErrPipelineCache)
		assert.Contains(t, warnings[0].Error(), "not a directory")
	}
}

// TestPipelineKnown: a pipeline is known once created; with the cache
// file on, a later device of the same driver knows it from the index kept
// beside the cache (a garbled line is skipped); with it off, only the
// process that created it does.
func TestPipelineKnown(t *testing.T) {
	dir := t.TempDir()
	spec := PipelineSpec{SPIRV: histogramSPV, Bindings: 2, PushConstantSize: 8, SpecConstants: []uint32{16}}
	other := PipelineSpec{SPIRV: histogramSPV, Bindings: 2, PushConstantSize: 8, SpecConstants: []uint32{32}}
	d, err := Open(Options{PipelineCacheDir: dir, Validation: true})
	require.NoError(t, err)
	assert.False(t, d.PipelineKnown(spec))
	_, err = d.NewPipeline(spec)
	require.NoError(t, err)
	assert.True(t, d.PipelineKnown(spec))
	assert.False(t, d.PipelineKnown(other), "specialisation constants make another pipeline")
	require.NoError(t, d.Close())
	assert.Empty(t, d.ValidationMessages())

	index := strings.TrimSuffix(d.PipelineCachePath(), ".bin") + ".pipelines"
	data, err := os.ReadFile(index)
	require.NoError(t, err, "Close keeps the index")
	require.NoError(t, os.WriteFile(index, append([]byte("not a digest\n"), data...), 0o644))
	later := openTest(t, Options{PipelineCacheDir: dir})
	assert.True(t, later.PipelineKnown(spec), "known from the index")
	assert.False(t, later.PipelineKnown(other))

	off := openTest(t, Options{PipelineCacheDir: "off"})
	assert.False(t, off.PipelineKnown(spec), "no index without the cache file")
	_, err = off.NewPipeline(spec)
	require.NoError(t, err)
	assert.True(t, off.PipelineKnown(spec))
}

// TestCompileTimes: a recorded compile time is the pipeline's own; one
// without stands in its class's median, none outside any class; times
// outside 1 µs to 5 minutes and bad classes are not kept; Close writes
// them beside the cache and a later device reads them back, skipping
// garbled lines, whether or not the driver's cache keeps compiled code;
// without the cache file nothing is written.
func TestCompileTimes(t *testing.T) {
	dir := t.TempDir()
	spec := func(c uint32) PipelineSpec {
		return PipelineSpec{SPIRV: histogramSPV, Bindings: 2, PushConstantSize: 8, SpecConstants: []uint32{c}}
	}
	d := openTest(t, Options{PipelineCacheDir: dir})
	_, _, ok := d.CompileTime(spec(1), "sort/radix-scatter")
	assert.False(t, ok, "nothing kept")
	d.RecordCompileTime(spec(1), "sort/radix-scatter", 100)
	d.RecordCompileTime(spec(2), "sort/radix-scatter", 300)
	d.RecordCompileTime(spec(3), "sort/radix-scatter", 2000)
	d.RecordCompileTime(spec(4), "resolve", 20)
	d.RecordCompileTime(spec(5), "resolve", 0)               // not kept
	d.RecordCompileTime(spec(6), "resolve", 1e9)             // not kept
	d.RecordCompileTime(spec(7), "two words", 5)             // not kept
	d.RecordCompileTime(spec(8), strings.Repeat("x", 65), 5) // not kept
	check := func(d *Device) {
		ms, own, ok := d.CompileTime(spec(2), "sort/radix-scatter")
		assert.True(t, ok && own)
		assert.Equal(t, 300.0, ms)
		ms, own, ok = d.CompileTime(spec(9), "sort/radix-scatter")
		assert.True(t, ok)
		assert.False(t, own)
		assert.Equal(t, 300.0, ms, "the class's median")
		ms, _, ok = d.CompileTime(spec(9), "resolve")
		assert.True(t, ok)
		assert.Equal(t, 20.0, ms)
		for _, c := range []uint32{5, 6, 7, 8} {
			_, own, _ := d.CompileTime(spec(c), "resolve")
			assert.False(t, own, "spec %d", c)
		}
		_, _, ok = d.CompileTime(spec(9), "fold")
		assert.False(t, ok, "a class with no times")
	}
	check(d)
	require.NoError(t, d.Close())

	file := strings.TrimSuffix(d.PipelineCachePath(), ".bin") + ".compile"
	data, err := os.ReadFile(file)
	require.NoError(t, err, "Close keeps the times")
	assert.Equal(t, 4, strings.Count(string(data), "\n"), "%s", data)
	require.NoError(t, os.WriteFile(file, append([]byte("garbled\nzz 1 x\n"+strings.Repeat("ab", 32)+" -5 resolve\n"), data...), 0o644))
	check(openTest(t, Options{PipelineCacheDir: dir}))

	t.Setenv("MESA_SHADER_CACHE_DISABLE", "true")
	lost := openTest(t, Options{PipelineCacheDir: dir})
	if lost.DriverCacheOff() != "" {
		check(lost) // the times are read with the driver's cache off too
	}

	off := openTest(t, Options{PipelineCacheDir: "off"})
	off.RecordCompileTime(spec(1), "resolve", 5)
	ms, own, ok := off.CompileTime(spec(1), "resolve")
	assert.True(t, ok && own)
	assert.Equal(t, 5.0, ms, "kept in the process")
}
