package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The data area's size; the legend gets a strip of its own to the right,
// so it never covers the data or the axes and is never clipped.
const (
	plotWidth  = 8 * vg.Inch
	plotHeight = 5 * vg.Inch
	plotMargin = 0.15 * vg.Inch
)

// render draws d into file (.png, .svg, .pdf, by the extension): one line
// with points per series, error bars where a point is the mean of
// several runs, the legend beside the plot.
func render(d *plotData, file string) error {
	p := plot.New()
	p.Title.Text = d.Title
	p.Title.Padding = plotMargin
	p.X.Label.Text = d.XLabel
	p.Y.Label.Text = d.YLabel
	p.X.Tick.Marker = linTicks{suffix: d.XSuffix}
	p.Y.Tick.Marker = linTicks{}
	p.Add(plotter.NewGrid())
	leg := plot.NewLegend()
	leg.Left, leg.Top = true, true
	var minX, maxX float64 = math.Inf(1), math.Inf(-1)
	for i, s := range d.Series {
		if len(s.X) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(s.X))
		for j := range s.X {
			xys[j].X, xys[j].Y = s.X[j], s.Y[j]
			minX, maxX = math.Min(minX, s.X[j]), math.Max(maxX, s.X[j])
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		pts.Color = plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		p.Add(l, pts)
		leg.Add(s.Label, l, pts)
		if len(s.Err) == len(s.X) {
			errs := make(plotter.YErrors, len(s.Err))
			for j, e := range s.Err {
				errs[j].Low, errs[j].High = e, e
			}
			eb := &plotter.YErrorBars{XYs: xys, YErrors: errs, LineStyle: plotter.DefaultLineStyle, CapWidth: plotter.DefaultCapWidth}
			eb.LineStyle.Color = plotutil.Color(i)
			p.Add(eb)
		}
	}
	switch {
	case d.LogX:
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
		if minX > 0 {
			p.X.Min = math.Pow(10, math.Floor(math.Log10(minX)))
			p.X.Max = math.Pow(10, math.Ceil(math.Log10(maxX)))
		}
		p.Y.Min, p.Y.Max = 0, 1
	case len(d.XNames) > 0:
		p.NominalX(d.XNames...)
		// Half a category either side, so the end labels are not clipped.
		p.X.Min, p.X.Max = -0.5, float64(len(d.XNames))-0.5
	default:
		// A margin either side, so end points are not on the frame.
		pad := (maxX - minX) * 0.04
		p.X.Min, p.X.Max = minX-pad, maxX+pad
	}
	if !d.LogX {
		p.Y.Min = math.Min(p.Y.Min, 0)
		p.Y.Max *= 1.05
	}
	legW := legendWidth(&leg, d)
	c, err := draw.NewFormattedCanvas(plotWidth+legW, plotHeight, strings.TrimPrefix(strings.ToLower(filepath.Ext(file)), "."))
	if err != nil {
		return err
	}
	dc := draw.New(c)
	area := draw.Crop(dc, plotMargin, -legW-plotMargin, plotMargin, -plotMargin)
	p.Draw(area)
	if legW > 0 {
		lc := draw.Crop(dc, plotWidth, -plotMargin, plotMargin, -plotMargin-p.Title.TextStyle.Rectangle(d.Title).Size().Y-p.Title.Padding)
		leg.Draw(lc)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// legendWidth is the strip the legend needs beside the plot (0 for a
// single series named as the Y axis is: no legend then).
func legendWidth(leg *plot.Legend, d *plotData) vg.Length {
	if len(d.Series) == 0 || len(d.Series) == 1 && strings.HasPrefix(d.YLabel, d.Series[0].Label) {
		return 0
	}
	var w vg.Length
	for _, s := range d.Series {
		w = max(w, leg.TextStyle.Width(s.Label))
	}
	return w + leg.ThumbnailWidth + leg.TextStyle.Width(" ") + 2*plotMargin
}
