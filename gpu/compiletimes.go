//go:build cgo

package gpu

import (
	"strings"
	"time"
)

// A pipeline's compile time is what its creation took plus, on a device
// that compiles at a pipeline's first dispatch (lavapipe spends most of
// it there), what the passes of its first call took beyond the same
// call's passes later: the Backend notes the first call of each
// pipeline it compiled (firstUse) and, when a call of the same plan runs
// again, keeps the difference, shared among the pipelines each pass
// compiled, with the device (vk.Device.RecordCompileTime), which writes
// it beside the pipeline cache for later processes. An estimate of a
// call's first run then takes each pipeline not yet compiled at its own
// kept time, or its class's, and only the others at cost.Device's
// CompileMs (CompileWork).

// firstUse is the first call of pipelines this Backend compiled: its
// device time by pass label, the compiled pipelines with their creation
// times, and the pipelines of each label.
type firstUse struct {
	byLabel map[string]time.Duration
	fresh   map[pipeKey]time.Duration
	labels  map[string][]pipeKey
	// left is how many more calls may go by before the note is dropped.
	left int
}

// Bounds of the firstUse notes: how many are kept at once, and how many
// calls each waits for a call of its plan.
const (
	maxFirstUses    = 16
	firstUseWaiting = 64
)

// compileClass names the kind of kernel of pk, whose kept compile times
// stand for a pipeline of the kind that has none of its own.
func compileClass(pk pipeKey) string {
	k := pk.key
	parts := []string{k.Family.String()}
	if k.Kind != 0 {
		parts = append(parts, k.Kind.String())
	}
	if k.Stage != 0 {
		parts = append(parts, k.Stage.String())
	}
	if k.Private {
		parts = append(parts, "private")
	}
	return strings.Join(parts, "/")
}

// noteCreated notes that pk's pipeline was compiled now, in created,
// and not yet dispatched (b.mu is held).
func (b *Backend) noteCreated(pk pipeKey, created time.Duration) {
	if b.undispatched == nil {
		b.undispatched = map[pipeKey]time.Duration{}
	}
	b.undispatched[pk] = created
}

// passLabels returns the pipelines of each pass label of pl, as the
// timings label them (an unlabelled pass is timed with the next
// labelled one).
func (pl *callPlan) passLabels() map[string][]pipeKey {
	labels := map[string][]pipeKey{}
	for _, list := range [][]pass{pl.passes, pl.more} {
		var pending []pipeKey
		for i := range list {
			ps := &list[i]
			if ps.kind == passDispatch {
				pending = append(pending, ps.pipeKey(pl.flags))
			}
			if ps.label != "" {
				labels[ps.label] = append(labels[ps.label], pending...)
				pending = nil
			}
		}
	}
	return labels
}

// noteCompiles keeps the compile times a completed call shows (see
// firstUse): the first call of pipelines c compiled is noted; a later
// call of a noted plan keeps the times. Calls of a device without
// timestamps show none. b.mu is held.
func (b *Backend) noteCompiles(c *call, passes []PassTime) {
	if len(passes) == 0 || (len(c.fresh) == 0 && len(b.firstUses) == 0) {
		return
	}
	byLabel := map[string]time.Duration{}
	for _, p := range passes {
		byLabel[p.Label] += p.Duration
	}
	sig := c.plan.String()
	if len(c.fresh) > 0 {
		if b.firstUses == nil {
			b.firstUses = map[string]*firstUse{}
		}
		if len(b.firstUses) >= maxFirstUses {
			for k := range b.firstUses {
				delete(b.firstUses, k)
				break
			}
		}
		b.firstUses[sig] = &firstUse{byLabel: byLabel, fresh: c.fresh, labels: c.plan.passLabels(), left: firstUseWaiting}
		return
	}
	fu, ok := b.firstUses[sig]
	if !ok {
		for k, f := range b.firstUses {
			if f.left--; f.left <= 0 {
				delete(b.firstUses, k)
			}
		}
		return
	}
	delete(b.firstUses, sig)
	kept := map[pipeKey]bool{}
	for label, keys := range fu.labels {
		var fresh []pipeKey
		for _, k := range keys {
			if _, ok := fu.fresh[k]; ok && !kept[k] {
				fresh = append(fresh, k)
			}
		}
		if len(fresh) == 0 {
			continue
		}
		extra := max(fu.byLabel[label]-byLabel[label], 0) / time.Duration(len(fresh))
		for _, k := range fresh {
			kept[k] = true
			b.recordCompile(k, fu.fresh[k]+extra)
		}
	}
	for k, created := range fu.fresh {
		if !kept[k] {
			b.recordCompile(k, created)
		}
	}
}

// recordCompile keeps d as the compile time of pk's pipeline.
func (b *Backend) recordCompile(pk pipeKey, d time.Duration) {
	spec, _, err := pipelineSpec(pk)
	if err != nil {
		return
	}
	b.dev.RecordCompileTime(spec, compileClass(pk), float64(d)/1e6)
}

// CompileWork is the compilation the first call of a plan waits for
// (Backend.CompileWork): Pipelines pipelines with no compile time kept
// for them or their class, each cost.Device.CompileMs, and the others'
// kept times, KeptMs milliseconds in all.
type CompileWork struct {
	Pipelines int
	KeptMs    float64
}

// CompileWork returns the compilation of the pipelines of a call planned
// as n that are not compiled yet (Uncompiled): each at its own kept
// compile time where one was kept, else at its class's (the median of
// the kept times of kernels of its kind), else counted in Pipelines.
func (b *Backend) CompileWork(n PlanNeeds) CompileWork {
	var w CompileWork
	if b == nil {
		return w
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return w
	}
	for _, k := range n.keys {
		if _, ok := b.pipes[k]; ok {
			continue
		}
		spec, _, err := pipelineSpec(k)
		if err != nil {
			w.Pipelines++
			continue
		}
		if b.dev.PipelineKnown(spec) {
			continue
		}
		if ms, _, ok := b.dev.CompileTime(spec, compileClass(k)); ok {
			w.KeptMs += ms
		} else {
			w.Pipelines++
		}
	}
	return w
}
