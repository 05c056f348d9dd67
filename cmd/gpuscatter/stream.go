//go:build cgo

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/npy"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

func init() {
	streamRun = func(ctx context.Context, b ops.Backend, f *runFlags) (bool, error) {
		done, err := runStreamed(ctx, b, f)
		if done {
			streamedRuns.Add(1)
		}
		return done, err
	}
}

// streamedRuns counts the runs runStreamed took, successful or not (tests).
var streamedRuns atomic.Int64

// runStreamed is streamRun for the Vulkan backend, also as --backend auto
// chose it. It takes a run whose data, indices and updates are regular
// .npy files of fixed-width dtypes stored as the device holds them
// (npy.Header.Raw) and whose output is an .npy file: it reads their
// headers, checks the call and the device memory it needs before any
// payload is read (gpu.Backend.CheckResident), reads each payload
// straight into a resident tensor (on unified memory, into the device
// memory itself), runs the call in place on data's tensor (the input
// files are never written), and writes the output file from that tensor.
// The errors are the host path's for the same input. It declines a run
// that the device refuses before any work (unsupported, out of memory) or
// has no memory for when its tensors are made, so that the host path
// gives its refusal, or, under auto, runs it on the CPU with its notice.
func runStreamed(ctx context.Context, b ops.Backend, f *runFlags) (bool, error) {
	g, ok := b.(*gpu.Backend)
	a, isAuto := b.(*autoBackend)
	if isAuto {
		g, ok = a.gpu.(*gpu.Backend)
	}
	if !ok || isPBPath(f.out.value) || f.skipBad {
		// --skip-bad-indices runs on the host path, which writes the
		// result with the error.
		return false, nil
	}
	args := [3]*tensorArg{&f.data, &f.indices, &f.updates}
	for _, a := range args {
		if !a.given {
			continue
		}
		// A FIFO or device would block or could not be sized: the host
		// path reads it, interruptibly.
		if st, err := os.Stat(a.path); a.path == "" || isPBPath(a.path) || err != nil || !st.Mode().IsRegular() {
			return false, nil
		}
	}
	in := &streamInputs{}
	err := interruptible(ctx, func() error { return in.open(f, args) })
	if err != nil && ctx.Err() != nil {
		return true, err // in may still be in use; the process ends
	}
	defer in.close()
	if err != nil || in.declined {
		return !in.declined, err
	}
	op := f.opRun
	req := ops.Request{Op: op.Name, Reduction: f.reduction.value, UseInitVal: f.useInitVal.value, Mode: f.mode.value,
		Axis: in.params[0], Start: in.params[1], Stop: in.params[2], Step: in.params[3], Axes: in.params[4]}
	for i, dst := range []**tensor.Tensor{&req.Data, &req.Indices, &req.Updates} {
		if h := in.files[i]; h != nil {
			*dst = &tensor.Tensor{DType: h.DType, Shape: h.Shape}
		}
	}
	p, err := ops.PrepareShapes(req)
	if err != nil {
		return true, err
	}
	if isAuto && a.est != nil && a.choose(ctx, p) {
		// Estimated faster on the CPU: the host path runs it there.
		a.chosenCPU = true
		return false, nil
	}
	// declineLost is the outcome of the device's failure, named by the
	// operator as the host path's are (an upload's is not): under auto,
	// a lost device has the host path run the call on the CPU, with the
	// notice saying why (the output file is not written yet).
	declineLost := func(err error) (bool, error) {
		if oe := (*ops.Error)(nil); !errors.As(err, &oe) {
			err = fmt.Errorf("%s: %w", op.Name, err)
		}
		if isAuto && errors.Is(err, ops.ErrDeviceLost) && a.fallsBack(err, op.Name) {
			a.chosenCPU = true
			return false, nil
		}
		return true, err
	}
	if err := g.CheckResident(p); err != nil {
		if errors.Is(err, ops.ErrUnsupported) || errors.Is(err, ops.ErrOutOfMemory) {
			return false, nil
		}
		return true, err
	}
	c := gpu.CallOf(req)
	c.Op = op.Name
	for i, dst := range []**gpu.Tensor{&c.Data, &c.Indices, &c.Updates} {
		h := in.files[i]
		if h == nil {
			continue
		}
		r := &readerErr{r: h}
		t, err := g.ReadTensor(ctx, h.DType, h.Shape, r)
		switch {
		case err == nil:
		case r.err != nil && errors.Is(err, r.err):
			return true, fileError(args[i].name, args[i].path, r.err)
		case errors.Is(err, ops.ErrOutOfMemory):
			// The device could not allocate what CheckResident counted
			// on: the host path meets the same shortage and says so, or
			// under auto runs on the CPU.
			return false, nil
		default:
			return declineLost(err)
		}
		in.tensors = append(in.tensors, t)
		*dst = t
	}
	c.Out = c.Data
	if err := g.Run(ctx, c); err != nil {
		return declineLost(err)
	}
	var lost error
	err = npy.WriteFilePayload(ctx, f.out.value, p.DType, p.Shape, func(w io.Writer) error {
		_, err := c.Out.CopyTo(ctx, w)
		if errors.Is(err, ops.ErrDeviceLost) {
			lost = err
		}
		return err
	})
	if lost != nil {
		return declineLost(lost) // --out was not written
	}
	if err != nil {
		return true, fileError("out", f.out.value, err)
	}
	return true, in.close()
}

// streamInputs are the inputs of a streamed run: the opened .npy files of
// data, indices and updates (nil where not given), the host tensors of
// axis, start, stop, step and axes, and the resident tensors made.
type streamInputs struct {
	files    [3]*npy.File
	params   [5]*tensor.Tensor
	tensors  []*gpu.Tensor
	declined bool // an input is not raw: the host path reads them all
}

// open opens the files in args and loads the parameter flags, in the
// host path's order, so that the first bad input is the one it names.
func (in *streamInputs) open(f *runFlags, args [3]*tensorArg) error {
	for i, a := range args {
		if !a.given {
			continue
		}
		h, err := npy.OpenFile(a.path)
		if err != nil {
			return fileError(a.name, a.path, err)
		}
		in.files[i] = h
		if !h.Raw {
			in.declined = true
			return nil
		}
	}
	for i, a := range []*tensorArg{&f.axis, &f.start, &f.stop, &f.step, &f.axes} {
		t, err := a.load()
		if err != nil {
			return err
		}
		in.params[i] = t
	}
	return nil
}

// close closes the files and releases the tensors; it may be called
// again.
func (in *streamInputs) close() error {
	var err error
	for i, h := range in.files {
		if h != nil {
			err = errors.Join(err, h.Close())
			in.files[i] = nil
		}
	}
	for _, t := range in.tensors {
		err = errors.Join(err, t.Close())
	}
	in.tensors = nil
	return err
}

// readerErr remembers the error its reader returned other than io.EOF,
// so that a reading error is told from the device's.
type readerErr struct {
	r   io.Reader
	err error
}

func (r *readerErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}
