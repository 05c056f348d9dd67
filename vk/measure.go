//go:build cgo

package vk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/gpuscatter/gpuscatter/cost"
)

// Measured are a device's figures, measured once through the paths the
// backend uses, so that the cost of a call can be estimated before it
// runs (package cost). Measure gives the transfers, the device copy and
// the submission; gpu.Backend.Figures adds the per-dispatch, per-element
// and per-atomic times of the backend's kernels and the host CPU's
// figures. A --facts file of another machine carries them too
// (DeviceInfo.Measured).
type Measured = cost.Device

// probeBytes is the size Measure transfers: large enough to reach a
// device's streaming rate, small enough to take well under a second on a
// CPU device.
const probeBytes = 32 << 20

// Measure measures the device's figures (Measured): each transfer the
// least of five runs, the submission the least of fifteen. The least
// rather than the median, so that the figures are the device's own: a
// moment when other work holds the machine makes some runs slower, never
// one faster, and a median of a few runs follows the load of the moment
// measured into every later estimate. It takes well under a second on
// lavapipe.
func (d *Device) Measure(ctx context.Context) (m Measured, err error) {
	n := min(uint64(probeBytes), d.limits.MaxAllocationBytes)
	m.ProbeBytes = n
	src, err := d.NewBuffer(n)
	if err != nil {
		return m, err
	}
	defer src.Close()
	dst, err := d.NewBuffer(n)
	if err != nil {
		return m, err
	}
	defer dst.Close()
	host := make([]byte, n)
	for i := range host {
		host[i] = byte(i*7 + 1)
	}
	timed := func(reps int, f func() error) (time.Duration, error) {
		ts := make([]time.Duration, reps)
		for i := range ts {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			t0 := time.Now()
			if err := f(); err != nil {
				return 0, err
			}
			ts[i] = time.Since(t0)
		}
		return max(slices.Min(ts), time.Nanosecond), nil
	}
	up, err := timed(5, func() error { return src.Upload(0, host) })
	if err != nil {
		return m, err
	}
	down, err := timed(5, func() error { return src.Download(0, host) })
	if err != nil {
		return m, err
	}
	seq, err := d.NewSequence()
	if err != nil {
		return m, err
	}
	defer seq.Close()
	record := func(f func() error) func() error {
		return func() error {
			if err := seq.Reset(); err != nil {
				return err
			}
			if err := f(); err != nil {
				return err
			}
			return seq.Submit(ctx)
		}
	}
	cp, err := timed(5, record(func() error { return seq.Copy(src, 0, dst, 0, n) }))
	if err != nil {
		return m, err
	}
	sw, err := timed(15, record(func() error { return seq.Fill(dst, 0, 4, 0) }))
	if err != nil {
		return m, err
	}
	gbps := func(bytes uint64, t time.Duration) float64 { return float64(bytes) / t.Seconds() / 1e9 }
	m.UploadGBps, m.DownloadGBps = gbps(n, up), gbps(n, down)
	m.CopyGBps = gbps(2*n, max(cp-sw, time.Nanosecond))
	m.SubmitWaitUs = float64(sw) / float64(time.Microsecond)
	return m, nil
}

// measuredFile is the name of the file that keeps a device's Measured:
// the device, its driver version and pipeline cache UUID in the name, as
// the pipeline cache file's, so that a new driver measures again.
func measuredFile(info DeviceInfo) string {
	return fmt.Sprintf("measured-%04x-%04x-%08x-%s.json", info.VendorID, info.DeviceID, info.DriverVersion, info.PipelineCacheUUID)
}

// MeasuredFigures returns the device's figures: those kept beside the
// pipeline cache (Options.PipelineCacheDir) from an earlier measurement
// of the same device and driver, or, when there are none or remeasure is
// set, a new Measure, which it keeps there. A file that cannot be read
// or written, or is refused (not a regular file, or over 16 KiB: see
// Options.PipelineCacheDir), is reported through Options.Warn
// (ErrMeasuredFigures) and measured around. Kept figures that fail
// cost.Device.Check (not finite, or outside the physical bounds it
// documents: a rate above 100 TB/s, a time per element of 10^300 ns) are
// measured again, without a warning, as are figures of an older version.
//
// more, when not nil, measures the figures Measure does not (it is
// given Measure's and fills in the rest) before they are kept; kept
// figures that lack what a complete measurement has (cost.Device.Complete)
// are then measured again. A new measurement without CompileMs (its
// pipelines were compiled before) keeps the kept one's.
func (d *Device) MeasuredFigures(ctx context.Context, remeasure bool, more func(*Measured) error) (Measured, error) {
	dir := d.cache.dir
	path := ""
	var kept Measured
	if dir != "" {
		path = filepath.Join(dir, measuredFile(d.info))
		if b, err := readCacheFile(path, maxFiguresBytes); err == nil {
			if json.Unmarshal(b, &kept) != nil || kept.Check() != nil {
				kept = Measured{}
			} else if (more == nil || kept.Complete()) && !remeasure {
				return kept, nil
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			d.cache.warnf(ErrMeasuredFigures, "%v; measuring again", err)
		}
	}
	m, err := d.Measure(ctx)
	if err == nil && more != nil {
		err = more(&m)
	}
	if m.CompileMs == 0 && kept.CompileMs > 0 {
		// Compilation is measured only where the probe's pipelines are
		// new; a measurement that found them compiled keeps the last
		// figure.
		m.CompileMs = kept.CompileMs
	}
	if err != nil || path == "" {
		return m, err
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := writeCacheFile(path, append(b, '\n')); err != nil {
		d.cache.warnf(ErrMeasuredFigures, "keeping the measured figures: %v", err)
	}
	return m, nil
}
