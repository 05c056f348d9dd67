// Package chart draws the figures of a bench.Report as a PNG bar chart:
// for each workload one bar per backend (the CPU and the GPU side by side)
// showing effective bandwidth in GB/s, plus one for a device backend's
// calls on inputs resident on the device where it timed them, with the
// bandwidth of a parallel memory copy drawn as a horizontal reference line
// across each group.
//
// It is a package of its own so that importing bench (for bench.Phase and
// bench.DeviceTimer, say) does not pull in the plotting library and its
// fonts.
package chart

import (
	"context"
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/gpuscatter/gpuscatter/atomicfile"
	"github.com/gpuscatter/gpuscatter/bench"
)

// residentSuffix names the series of a backend's calls on inputs resident
// on its device (bench.Result.ResidentTime).
const residentSuffix = " resident, in place"

// palette colours the series (backends, then resident runs) in the order they appear in the report.
var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // blue: the reference
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // orange
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // green
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // red
}

// Render draws r as a PNG image into w. Results that were skipped or failed
// have no bar. It fails when r has no results.
func Render(w io.Writer, r *bench.Report) error {
	var workloads, series []string
	wi, si := map[string]int{}, map[string]int{}
	add := func(list *[]string, index map[string]int, name string) {
		if _, ok := index[name]; !ok {
			index[name] = len(*list)
			*list = append(*list, name)
		}
	}
	for _, x := range r.Results {
		add(&workloads, wi, x.Workload)
		add(&series, si, x.Backend)
		if x.ResidentTime > 0 {
			add(&series, si, x.Backend+residentSuffix)
		}
	}
	if len(workloads) == 0 {
		return fmt.Errorf("chart: the report has no results")
	}
	gbps := make([]plotter.Values, len(series))
	for i := range gbps {
		gbps[i] = make(plotter.Values, len(workloads))
	}
	memcpy := make([]float64, len(workloads))
	top := 0.0
	for _, x := range r.Results {
		if x.Skipped != "" || x.Error != "" {
			continue
		}
		gbps[si[x.Backend]][wi[x.Workload]] = x.GBps
		memcpy[wi[x.Workload]] = x.MemcpyGBps
		top = max(top, x.GBps, x.MemcpyGBps)
		if x.ResidentTime > 0 {
			g := float64(x.Bytes) / x.ResidentTime.Seconds() / 1e9
			gbps[si[x.Backend+residentSuffix]][wi[x.Workload]] = g
			top = max(top, g)
		}
	}

	p := plot.New()
	p.Title.Text = "gpuscatter bench: effective bandwidth"
	p.Y.Label.Text = "GB/s (data + output + updates + indices)"
	p.Y.Min = 0
	p.Y.Max = math.Max(top*1.4, 1e-3) // room for the legend
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	p.Add(plotter.NewGrid())

	group := vg.Points(60)
	width := group / vg.Length(len(series))
	for i, vals := range gbps {
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return fmt.Errorf("chart: %w", err)
		}
		bars.LineStyle.Width = 0
		bars.Color = palette[i%len(palette)]
		bars.Offset = -group/2 + width*vg.Length(i) + width/2
		p.Add(bars)
		p.Legend.Add(series[i]+" GB/s", bars)
	}
	// The memory copy: one segment across each group.
	var legendLine *plotter.Line
	for i, m := range memcpy {
		if m <= 0 {
			continue
		}
		seg, err := plotter.NewLine(plotter.XYs{{X: float64(i) - 0.45, Y: m}, {X: float64(i) + 0.45, Y: m}})
		if err != nil {
			return fmt.Errorf("chart: %w", err)
		}
		seg.LineStyle.Width = vg.Points(1.5)
		seg.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		seg.LineStyle.Color = color.Gray{Y: 0x40}
		p.Add(seg)
		legendLine = seg
	}
	if legendLine != nil {
		p.Legend.Add("memcpy GB/s", legendLine)
	}
	p.Legend.Top = true
	p.NominalX(workloads...)

	wd := vg.Length(math.Max(6, 0.9*float64(len(workloads))+1.5)) * vg.Inch
	c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(wd, 4.5*vg.Inch), vgimg.UseDPI(110), vgimg.UseBackgroundColor(color.White))}
	p.Draw(draw.New(c))
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	return nil
}

// WriteFile draws r as a PNG image into path, atomically (atomicfile.Write).
func WriteFile(path string, r *bench.Report) error {
	return atomicfile.Write(context.Background(), path, func(w io.Writer) error { return Render(w, r) })
}
