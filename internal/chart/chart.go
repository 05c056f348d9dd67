// Package chart draws the figures of a bench.Report as a PNG bar chart:
// for each workload one bar per backend (the CPU and the GPU side by side)
// showing effective bandwidth in GB/s, plus one for a device backend's
// calls in place on inputs resident on the device where it timed them,
// with the bandwidth of a parallel memory copy drawn as a dashed line
// across each group.
//
// The GB/s axis is logarithmic, so that a workload at 0.2 GB/s is as
// readable as one at 60 GB/s, and the legend stands in a column of its own
// to the right of the data. Every bar of a workload divides the same bytes
// (bench.Result.Bytes, the traffic of the call that copies data) by its
// own time, so the bars of a group compare as their times do: the tallest
// is the fastest, the resident call included, which may pass the memory
// copy's line because it does not copy data. The value labels are drawn
// last, on a white ground, so that neither the line nor a neighbour's bar
// covers them; the title names the CPU and the devices.
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
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
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

// Sizes of the image.
const (
	dpi        = 110
	height     = 4.8 * vg.Inch
	legendCol  = 2.5 * vg.Inch // the legend's column, right of the plot
	groupWidth = 60            // points per workload's group of bars
)

// geometry is where draw put things, in canvas coordinates (points from
// the bottom left corner), for the tests.
type geometry struct {
	size   vg.Point       // the whole image
	data   vg.Rectangle   // the plot's data area
	legend vg.Rectangle   // the legend box
	bars   []vg.Rectangle // every bar drawn
	labels []vg.Rectangle // the white box of every value label
	layers []string       // what was drawn, in order: bars, memcpy, labels
	min    float64        // the GB/s at the bottom of the axis
	max    float64        // the GB/s at its top
	log    bool           // the GB/s axis is logarithmic
}

// Render draws r as a PNG image into w. Results that were skipped or failed
// have no bar. It fails when r has no results.
func Render(w io.Writer, r *bench.Report) error {
	c, _, err := render(r)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	return nil
}

// WriteFile draws r as a PNG image into path, atomically (atomicfile.Write).
func WriteFile(path string, r *bench.Report) error {
	return atomicfile.Write(context.Background(), path, func(w io.Writer) error { return Render(w, r) })
}

// series is what the chart shows: a value per workload for each series.
type series struct {
	workloads []string
	names     []string
	gbps      [][]float64 // [series][workload]; 0: no bar
	memcpy    []float64   // per workload; 0: none
}

// collect gathers the bars of r.
func collect(r *bench.Report) (*series, error) {
	s := &series{}
	wi, si := map[string]int{}, map[string]int{}
	add := func(list *[]string, index map[string]int, name string) {
		if _, ok := index[name]; !ok {
			index[name] = len(*list)
			*list = append(*list, name)
		}
	}
	for _, x := range r.Results {
		add(&s.workloads, wi, x.Workload)
		add(&s.names, si, x.Backend)
		if x.ResidentTime > 0 {
			add(&s.names, si, x.Backend+residentSuffix)
		}
	}
	if len(s.workloads) == 0 {
		return nil, fmt.Errorf("chart: the report has no results")
	}
	s.gbps = make([][]float64, len(s.names))
	for i := range s.gbps {
		s.gbps[i] = make([]float64, len(s.workloads))
	}
	s.memcpy = make([]float64, len(s.workloads))
	for _, x := range r.Results {
		if x.Skipped != "" || x.Error != "" {
			continue
		}
		w := wi[x.Workload]
		s.gbps[si[x.Backend]][w] = x.GBps
		s.memcpy[w] = x.MemcpyGBps
		if x.ResidentTime > 0 {
			// The workload's bytes, as for the other bars, not the fewer
			// the resident call moves: bars of a group compare as times.
			s.gbps[si[x.Backend+residentSuffix]][w] = float64(x.Bytes) / x.ResidentTime.Seconds() / 1e9
		}
	}
	return s, nil
}

// axisRange returns powers of ten around every positive value of s, for
// the logarithmic axis.
func (s *series) axisRange() (lo, hi float64) {
	lo, hi = math.Inf(1), 0.0
	for _, v := range append(append([]float64{}, s.memcpy...), flatten(s.gbps)...) {
		if v > 0 && !math.IsInf(v, 0) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if hi == 0 {
		return 0.1, 1
	}
	// At least half a decade under the lowest bar, so that it is never a
	// sliver, and room over the highest for its label.
	lo = math.Pow(10, math.Floor(math.Log10(lo/3)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi*1.3)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

func flatten(v [][]float64) []float64 {
	var out []float64
	for _, x := range v {
		out = append(out, x...)
	}
	return out
}

// render draws r onto a new PNG canvas and says where it drew.
func render(r *bench.Report) (*vgimg.PngCanvas, *geometry, error) {
	s, err := collect(r)
	if err != nil {
		return nil, nil, err
	}
	lo, hi := s.axisRange()

	p := plot.New()
	// The title is drawn across the whole image, legend column included
	// (see below), so that a long device name fits.
	head := p.Title.TextStyle
	head.Font.Size = vg.Points(12)
	head.XAlign, head.YAlign = draw.XCenter, draw.YBottom
	sub := head
	sub.Font.Size = vg.Points(9)
	heading := title(r)
	subheading := "GB/s: the bytes a workload's call must move over each bar's time, the same bytes for every bar of a workload"
	// A short label: gonum shrinks the axis to fit a long one.
	p.Y.Label.Text = "GB/s (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = lo, hi
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil // the groups need no vertical lines
	p.Add(grid)

	g := &geometry{min: lo, max: hi, log: true}
	label := p.X.Tick.Label
	label.Rotation = 0
	label.XAlign, label.YAlign = draw.XCenter, draw.YBottom
	label.Font.Size = vg.Points(7)
	b := &bars{vals: s.gbps, base: lo, top: hi, group: vg.Points(groupWidth), label: label, geom: g}
	p.Add(layer{b, "bars", g})
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.Padding = vg.Points(4)
	for i, name := range s.names {
		leg.Add(name+" GB/s", swatch{palette[i%len(palette)]})
	}
	var legendLine *plotter.Line
	for i, m := range s.memcpy {
		if m <= 0 {
			continue
		}
		seg, err := plotter.NewLine(plotter.XYs{{X: float64(i) - 0.45, Y: m}, {X: float64(i) + 0.45, Y: m}})
		if err != nil {
			return nil, nil, fmt.Errorf("chart: %w", err)
		}
		seg.LineStyle.Width = vg.Points(1.5)
		seg.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		seg.LineStyle.Color = color.Gray{Y: 0x40}
		p.Add(layer{seg, "memcpy", g})
		legendLine = seg
	}
	if legendLine != nil {
		leg.Add("memcpy GB/s", legendLine)
	}
	p.Add(layer{labels{b}, "labels", g}) // after the memcpy lines, over them
	p.NominalX(s.workloads...)

	wd := vg.Length(math.Max(6, 0.9*float64(len(s.workloads))+1.5))*vg.Inch + legendCol
	wd = max(wd, head.Width(heading)+vg.Points(24), sub.Width(subheading)+vg.Points(24))
	c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(wd, height), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))}
	dc := draw.New(c)
	// A margin all round keeps the title and labels inside the image.
	margin := vg.Points(6)
	dc = draw.Crop(dc, margin, -margin, margin, -margin)
	top := dc.Max.Y
	dc.FillText(head, vg.Point{X: dc.Center().X, Y: top - head.Height(heading)}, heading)
	top -= head.Height(heading) + vg.Points(3)
	dc.FillText(sub, vg.Point{X: dc.Center().X, Y: top - sub.Height(subheading)}, subheading)
	top -= sub.Height(subheading) + vg.Points(10)
	dc = draw.Crop(dc, 0, 0, 0, top-dc.Max.Y)
	plotArea := draw.Crop(dc, 0, -legendCol, 0, 0)
	legendArea := draw.Crop(dc, wd-legendCol-margin+vg.Points(12), 0, 0, 0)
	p.Draw(plotArea)
	data := p.DataCanvas(plotArea)
	// The legend's column starts at the data area's top.
	legendArea.Max.Y = data.Max.Y
	leg.Draw(legendArea)

	g.size = vg.Point{X: wd, Y: height}
	g.data = data.Rectangle
	g.legend = leg.Rectangle(legendArea)
	return &c, g, nil
}

// bars draws one bar per series and workload from the bottom of the
// logarithmic axis up to its value.
type bars struct {
	vals      [][]float64
	base, top float64
	group     vg.Length
	label     text.Style // of the values over the bars
	geom      *geometry
}

// Plot implements plot.Plotter.
func (b *bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	width := b.group / vg.Length(len(b.vals))
	for si, vals := range b.vals {
		col := palette[si%len(palette)]
		for wi, v := range vals {
			if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				continue
			}
			x := trX(float64(wi)) - b.group/2 + width*vg.Length(si)
			r := vg.Rectangle{Min: vg.Point{X: x, Y: trY(b.base)}, Max: vg.Point{X: x + width, Y: trY(min(v, b.top))}}
			c.FillPolygon(col, c.ClipPolygonY([]vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}}))
			b.geom.bars = append(b.geom.bars, r)
		}
	}
}

// layer is a plotter that notes in geometry that it was drawn.
type layer struct {
	plot.Plotter
	name string
	g    *geometry
}

// DataRange implements plot.DataRanger: that of the layer's plotter.
func (l layer) DataRange() (xmin, xmax, ymin, ymax float64) {
	return l.Plotter.(plot.DataRanger).DataRange()
}

// Plot implements plot.Plotter.
func (l layer) Plot(c draw.Canvas, p *plot.Plot) {
	if n := len(l.g.layers); n == 0 || l.g.layers[n-1] != l.name {
		l.g.layers = append(l.g.layers, l.name)
	}
	l.Plotter.Plot(c, p)
}

// labels draws the value over each bar of b, on a white ground: a log axis
// is read by its labels.
type labels struct{ b *bars }

// DataRange implements plot.DataRanger: that of the bars.
func (l labels) DataRange() (xmin, xmax, ymin, ymax float64) { return l.b.DataRange() }

// Plot implements plot.Plotter.
func (l labels) Plot(c draw.Canvas, p *plot.Plot) {
	b := l.b
	trX, trY := p.Transforms(&c)
	width := b.group / vg.Length(len(b.vals))
	for si, vals := range b.vals {
		for wi, v := range vals {
			if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				continue
			}
			x := trX(float64(wi)) - b.group/2 + width*vg.Length(si) + width/2
			y := trY(min(v, b.top)) + vg.Points(1.5)
			txt := formatGBps(v)
			w, h := b.label.Width(txt), b.label.Height(txt)
			pad := vg.Points(1)
			box := vg.Rectangle{Min: vg.Point{X: x - w/2 - pad, Y: y - pad}, Max: vg.Point{X: x + w/2 + pad, Y: y + h}}
			c.FillPolygon(color.White, []vg.Point{box.Min, {X: box.Max.X, Y: box.Min.Y}, box.Max, {X: box.Min.X, Y: box.Max.Y}})
			c.FillText(b.label, vg.Point{X: x, Y: y}, txt)
			b.geom.labels = append(b.geom.labels, box)
		}
	}
}

// title names the machine: the CPU with its threads and each device
// backend's device.
func title(r *bench.Report) string {
	t := "gpuscatter bench on " + r.CPU
	if r.Threads > 0 {
		t += fmt.Sprintf(" (%d threads)", r.Threads)
	}
	seen := map[string]bool{"cpu": true}
	for _, x := range r.Results {
		if !seen[x.Device] {
			seen[x.Device] = true
			t += " and " + x.Device
		}
	}
	return t
}

// formatGBps renders v with two significant digits, or as an integer.
func formatGBps(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f", v)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// DataRange implements plot.DataRanger.
func (b *bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	n := 0
	if len(b.vals) > 0 {
		n = len(b.vals[0])
	}
	return -0.5, float64(n) - 0.5, b.base, b.top
}

// swatch is a legend entry's coloured square.
type swatch struct{ color color.Color }

// Thumbnail implements plot.Thumbnailer.
func (s swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.color, []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
}
