//go:build cgo

package gpubench

import (
	"context"
	"time"

	"github.com/gpuscatter/gpuscatter/bench"
	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/ops"
)

var _ bench.Estimator = Backend{}

// Figures returns the device's figures with the host CPU's (kept, or
// measured now and kept; remeasure measures again): gpu.Backend.Figures
// with cpuref.Measure for cost.Device.CPU.
func (b Backend) Figures(ctx context.Context, remeasure bool) (cost.Device, error) {
	return b.Backend.Figures(ctx, remeasure, func(m *cost.Device) error {
		c, err := cpuref.Measure(ctx)
		if err != nil {
			return err
		}
		m.CPU = &c
		return nil
	})
}

// Estimates returns the estimates of calls calls of p, whose work on the
// device is w (gpu.PlanNeeds.Work of Needs, or of NeedsInPlace with
// inPlace; gpu.Backend.Work), from the figures m:
// on the device, as that many Execute calls or, with inPlace, as one
// batch of them in place on resident tensors; and on the CPU backend
// (unknown where m has no CPU figures), in place with inPlace.
func Estimates(m *cost.Device, w cost.GPUWork, p *ops.Plan, calls int, inPlace bool) (device, cpu cost.Estimate) {
	device = m.Estimate(w.Repeat(calls, inPlace))
	if m.CPU != nil {
		cpu = m.CPU.Estimate(cpuref.WorkOf(p, inPlace).Repeat(calls))
	}
	return device, cpu
}

// Estimate returns the estimated times of calls calls of p, from the
// device's figures (Figures), as the bench measures them: on the device
// as host calls or, with resident, as one batch in place on resident
// tensors, its pipelines compiled (the bench times them after a warm-up);
// on the CPU backend as host calls or, with resident, in place;
// and where --backend auto runs them as host calls, by the lower of the
// host calls' estimates (it is bench.Estimator).
func (b Backend) Estimate(ctx context.Context, p *ops.Plan, calls int, resident bool) (device, cpu time.Duration, choice string, err error) {
	m, err := b.Figures(ctx, false)
	if err != nil {
		return 0, 0, "", err
	}
	host, err := b.Needs(p)
	if err != nil {
		return 0, 0, "", err
	}
	hostDev, hostCPU := Estimates(&m, host.Work(), p, calls, false)
	dev, c := hostDev, hostCPU
	if resident {
		in, err := b.NeedsInPlace(p)
		if err != nil {
			return 0, 0, "", err
		}
		dev, c = Estimates(&m, in.Work(), p, calls, true)
	}
	return duration(dev.Ms), duration(c.Ms), Choice(hostDev, hostCPU), nil
}

// Choice returns where --backend auto runs a host call with these
// estimates: "cpu" where the CPU's is known and lower, else "gpu".
func Choice(device, cpu cost.Estimate) string {
	if cpu.Known() && device.Known() && cpu.Ms < device.Ms {
		return "cpu"
	}
	return "gpu"
}

func duration(ms float64) time.Duration { return time.Duration(ms * 1e6) }

// DeviceFigures returns the device's figures (Figures), for the bench's
// report (it is bench.Estimator).
func (b Backend) DeviceFigures(ctx context.Context) (*cost.Device, error) {
	m, err := b.Figures(ctx, false)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

var _ bench.PhaseEstimator = Backend{}

// EstimatePhases returns the estimated device time of each pass label of
// calls host calls of p, summed over them, from the figures m (Figures)
// as cost.Device.PassMs gives each pass: what the bench's device phases
// measure (it is bench.PhaseEstimator).
func (b Backend) EstimatePhases(m *cost.Device, p *ops.Plan, calls int) ([]bench.Phase, error) {
	n, err := b.Needs(p)
	if err != nil {
		return nil, err
	}
	return PhaseEstimates(m, n, calls), nil
}

// PhaseEstimates returns the estimated device time of each label of the
// passes of n (gpu.PlanNeeds.Passes), calls times, from the figures m, in
// the order the labels first appear.
func PhaseEstimates(m *cost.Device, n gpu.PlanNeeds, calls int) []bench.Phase {
	var out []bench.Phase
	at := map[string]int{}
	for i, ps := range n.Work().Passes {
		name := n.Passes[i].Name
		d := duration(m.PassMs(ps) * float64(calls))
		if j, ok := at[name]; ok {
			out[j].Duration += d
			continue
		}
		at[name] = len(out)
		out = append(out, bench.Phase{Name: name, Duration: d})
	}
	return out
}
