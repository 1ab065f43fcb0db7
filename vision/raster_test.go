package vision

import (
	"fmt"
	"image"
	"image/color"
	"testing"
)

// markedYCbCr is white with a red s×s square at the top-left, at ratio r.
func markedYCbCr(w, h, s int, r image.YCbCrSubsampleRatio) *image.YCbCr {
	m := image.NewYCbCr(image.Rect(0, 0, w, h), r)
	ry, rcb, rcr := color.RGBToYCbCr(255, 0, 0)
	for y := range h {
		for x := range w {
			yi, ci := m.YOffset(x, y), m.COffset(x, y)
			if x < s && y < s {
				m.Y[yi], m.Cb[ci], m.Cr[ci] = ry, rcb, rcr
			} else {
				m.Y[yi], m.Cb[ci], m.Cr[ci] = 255, 128, 128
			}
		}
	}
	return m
}

func TestRasterYCbCrRatios(t *testing.T) {
	ratios := []image.YCbCrSubsampleRatio{
		image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420,
		image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410,
	}
	corners := map[int]string{
		1: "top-left", 2: "top-right", 3: "bottom-right", 4: "bottom-left",
		5: "top-left", 6: "top-right", 7: "bottom-right", 8: "bottom-left",
	}
	for _, ratio := range ratios {
		for o := 1; o <= 8; o++ {
			// Odd sizes exercise the rounding of chroma plane sizes.
			for _, size := range [][4]int{{41, 23, 41, 23}, {401, 203, 41, 21}, {401, 203, 17, 9}} {
				t.Run(fmt.Sprintf("%v/%d/%dx%d-to-%dx%d", ratio, o, size[0], size[1], size[2], size[3]), func(t *testing.T) {
					src := markedYCbCr(size[0], size[1], size[0]/4, ratio)
					m := toRaster(src).resize(size[2], size[3]).orient(o).image()
					w, h := size[2], size[3]
					if o >= 5 {
						w, h = h, w
					}
					if b := m.Bounds(); b.Dx() != w || b.Dy() != h {
						t.Fatalf("bounds %v, want %dx%d", b, w, h)
					}
					if y, ok := m.(*image.YCbCr); ok {
						// The planes must be exactly what image.NewYCbCr
						// would allocate for the ratio, or At panics or lies.
						want := image.NewYCbCr(y.Rect, y.SubsampleRatio)
						if len(y.Cb) < len(want.Cb) || y.CStride < want.CStride {
							t.Fatalf("chroma plane %d stride %d, want %d stride %d", len(y.Cb), y.CStride, len(want.Cb), want.CStride)
						}
					}
					if got := markedCorners(m); got != corners[o] {
						t.Errorf("marked corners %q, want %q", got, corners[o])
					}
				})
			}
		}
	}
}

func TestRasterKinds(t *testing.T) {
	nrgba := marked(120, 60, 40)
	rgba := image.NewRGBA(nrgba.Rect)
	copy(rgba.Pix, nrgba.Pix)
	cmyk := image.NewCMYK(nrgba.Rect)
	for y := range 60 {
		for x := range 120 {
			cmyk.Set(x, y, nrgba.At(x, y))
		}
	}
	gray16 := image.NewGray16(nrgba.Rect)
	for y := range 60 {
		for x := range 120 {
			gray16.Set(x, y, nrgba.At(x, y))
		}
	}
	offset := image.NewNRGBA(image.Rect(5, 5, 125, 65))
	for y := range 60 {
		for x := range 120 {
			offset.Set(x+5, y+5, nrgba.At(x, y))
		}
	}
	for _, tt := range []struct {
		name string
		m    image.Image
		kind rasterKind
	}{
		{"nrgba", nrgba, kindNRGBA},
		{"rgba", rgba, kindRGBA},
		{"cmyk", cmyk, kindRGBA},
		{"gray16", gray16, kindGray},
		{"nrgba off origin", offset, kindRGBA},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := toRaster(tt.m)
			if r.kind != tt.kind {
				t.Fatalf("kind %d, want %d", r.kind, tt.kind)
			}
			// Plain resize, box only, box then resize.
			for _, w := range []int{100, 60, 26} {
				h := w / 2
				m := r.resize(w, h).orient(6).image()
				if b := m.Bounds(); b.Dx() != h || b.Dy() != w {
					t.Fatalf("to %dx%d: bounds %v", w, h, b)
				}
				if got := markedCorners(m); got != "top-right" {
					t.Errorf("to %dx%d: marked corners %q, want top-right", w, h, got)
				}
			}
		})
	}
}

func TestFit(t *testing.T) {
	for _, tt := range []struct{ w, h, side, tw, th int }{
		{3000, 1000, 2048, 2048, 683},
		{1000, 3000, 2048, 683, 2048},
		{4000, 3000, 2048, 2048, 1536},
		{2048, 2048, 2048, 2048, 2048},
		{100, 50, 2048, 100, 50},
		{60000, 1, 2048, 2048, 1},
		{3, 2, 1, 1, 1},
	} {
		if tw, th := fit(tt.w, tt.h, tt.side); tw != tt.tw || th != tt.th {
			t.Errorf("fit(%d, %d, %d) = %d, %d, want %d, %d", tt.w, tt.h, tt.side, tw, th, tt.tw, tt.th)
		}
	}
}
