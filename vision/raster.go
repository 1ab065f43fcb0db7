package vision

import (
	"image"
	"image/draw"

	"github.com/nfnt/resize"
)

// A plane is one block of interleaved samples, bpp bytes per pixel.
type plane struct {
	pix       []byte
	stride    int
	w, h, bpp int
}

type rasterKind int

const (
	kindGray  rasterKind = iota // one plane, bpp 1
	kindRGBA                    // one plane, bpp 4, premultiplied alpha
	kindNRGBA                   // one plane, bpp 4, straight alpha
	kindYCbCr                   // Y, Cb, Cr planes at ratio
)

// A raster is a decoded image reduced to the few layouts the resize and
// orientation code handles; working plane by plane keeps JPEG's subsampled
// chroma small instead of expanding it to full-size RGB.
type raster struct {
	kind   rasterKind
	ratio  image.YCbCrSubsampleRatio
	planes []plane
}

// toRaster wraps m's pixels without copying when its layout is already one
// of the raster kinds, and converts it to 8-bit RGBA otherwise.
func toRaster(m image.Image) raster {
	if m.Bounds().Min == (image.Point{}) {
		switch m := m.(type) {
		case *image.YCbCr:
			return ycbcrRaster(m)
		case *image.Gray:
			return raster{kind: kindGray, planes: []plane{{m.Pix, m.Stride, m.Rect.Dx(), m.Rect.Dy(), 1}}}
		case *image.RGBA:
			return raster{kind: kindRGBA, planes: []plane{{m.Pix, m.Stride, m.Rect.Dx(), m.Rect.Dy(), 4}}}
		case *image.NRGBA:
			return raster{kind: kindNRGBA, planes: []plane{{m.Pix, m.Stride, m.Rect.Dx(), m.Rect.Dy(), 4}}}
		}
	}
	b := m.Bounds()
	r := image.Rect(0, 0, b.Dx(), b.Dy())
	if _, ok := m.(*image.Gray16); ok {
		g := image.NewGray(r)
		draw.Draw(g, r, m, b.Min, draw.Src)
		return raster{kind: kindGray, planes: []plane{{g.Pix, g.Stride, r.Dx(), r.Dy(), 1}}}
	}
	return rgbaRaster(m)
}

// rgbaRaster converts m to premultiplied RGBA, so that averaging pixels
// weights colour by coverage.
func rgbaRaster(m image.Image) raster {
	b := m.Bounds()
	c := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(c, c.Rect, m, b.Min, draw.Src)
	return raster{kind: kindRGBA, planes: []plane{{c.Pix, c.Stride, b.Dx(), b.Dy(), 4}}}
}

func ycbcrRaster(m *image.YCbCr) raster {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	cw, ch := chromaSize(w, h, m.SubsampleRatio)
	return raster{kind: kindYCbCr, ratio: m.SubsampleRatio, planes: []plane{
		{m.Y, m.YStride, w, h, 1},
		{m.Cb, m.CStride, cw, ch, 1},
		{m.Cr, m.CStride, cw, ch, 1},
	}}
}

// chromaSize matches image.NewYCbCr for a rectangle at the origin.
func chromaSize(w, h int, r image.YCbCrSubsampleRatio) (int, int) {
	switch r {
	case image.YCbCrSubsampleRatio422:
		return (w + 1) / 2, h
	case image.YCbCrSubsampleRatio420:
		return (w + 1) / 2, (h + 1) / 2
	case image.YCbCrSubsampleRatio440:
		return w, (h + 1) / 2
	case image.YCbCrSubsampleRatio411:
		return (w + 3) / 4, h
	case image.YCbCrSubsampleRatio410:
		return (w + 3) / 4, (h + 1) / 2
	}
	return w, h
}

func (r raster) size() (int, int) { return r.planes[0].w, r.planes[0].h }

// planeSizes lists each plane's size for an image of w×h.
func (r raster) planeSizes(w, h int) [][2]int {
	if r.kind != kindYCbCr {
		return [][2]int{{w, h}}
	}
	cw, ch := chromaSize(w, h, r.ratio)
	return [][2]int{{w, h}, {cw, ch}, {cw, ch}}
}

// resize scales to w×h. A large reduction is first done by an integer box
// filter, which is cheap and exact, so that nfnt/resize only ever filters an
// image less than twice the target size.
func (r raster) resize(w, h int) raster {
	sw, sh := r.size()
	if sw == w && sh == h {
		return r
	}
	if k := min(sw/w, sh/h); k >= 2 {
		r = r.box(k)
	}
	out := raster{kind: r.kind, ratio: r.ratio}
	if r.kind == kindNRGBA {
		out.kind = kindRGBA // nfnt/resize premultiplies NRGBA input
	}
	for i, s := range r.planeSizes(w, h) {
		out.planes = append(out.planes, resizePlane(r.planes[i], s[0], s[1], r.kind == kindNRGBA))
	}
	return out
}

// resizePlane uses nfnt/resize on a plane viewed as Gray, RGBA or NRGBA.
// Bilinear over a support scaled to the reduction is a proper
// antialiasing filter and several times faster than Lanczos.
func resizePlane(p plane, w, h int, straight bool) plane {
	if p.w == w && p.h == h {
		return p
	}
	rect := image.Rect(0, 0, p.w, p.h)
	var src image.Image
	switch {
	case p.bpp == 1:
		src = &image.Gray{Pix: p.pix, Stride: p.stride, Rect: rect}
	case straight:
		src = &image.NRGBA{Pix: p.pix, Stride: p.stride, Rect: rect}
	default:
		src = &image.RGBA{Pix: p.pix, Stride: p.stride, Rect: rect}
	}
	// nfnt/resize returns Gray for Gray and RGBA for (N)RGBA, which
	// toRaster wraps without copying.
	return toRaster(resize.Resize(uint(w), uint(h), src, resize.Bilinear)).planes[0]
}

// box shrinks every plane by k in both directions, averaging each k×k block
// (partial blocks at the right and bottom edges average what they cover).
func (r raster) box(k int) raster {
	out := raster{kind: r.kind, ratio: r.ratio}
	if r.kind == kindNRGBA {
		out.kind = kindRGBA
	}
	for _, p := range r.planes {
		out.planes = append(out.planes, boxPlane(p, k, r.kind == kindNRGBA))
	}
	return out
}

func boxPlane(p plane, k int, straight bool) plane {
	dw, dh := (p.w+k-1)/k, (p.h+k-1)/k
	out := plane{pix: make([]byte, dw*dh*p.bpp), stride: dw * p.bpp, w: dw, h: dh, bpp: p.bpp}
	acc := make([]uint64, dw*p.bpp)
	for dy := range dh {
		clear(acc)
		y0, y1 := dy*k, min(dy*k+k, p.h)
		for y := y0; y < y1; y++ {
			row := p.pix[y*p.stride : y*p.stride+p.w*p.bpp]
			if straight {
				addStraight(acc, row, k)
			} else {
				addRow(acc, row, p.bpp, k)
			}
		}
		dst := out.pix[dy*out.stride : (dy+1)*out.stride]
		for dx := range dw {
			n := uint64((min(dx*k+k, p.w) - dx*k) * (y1 - y0))
			for c := range p.bpp {
				i := dx*p.bpp + c
				if straight && c < 3 {
					// acc holds colour×alpha; dividing by 255 as well
					// yields premultiplied RGBA.
					dst[i] = uint8((acc[i] + n*255/2) / (n * 255))
					continue
				}
				dst[i] = uint8((acc[i] + n/2) / n)
			}
		}
	}
	return out
}

func addRow(acc []uint64, row []byte, bpp, k int) {
	if bpp == 1 {
		for x, v := range row {
			acc[x/k] += uint64(v)
		}
		return
	}
	for x := 0; x+bpp <= len(row); x += bpp {
		a := acc[(x/bpp/k)*bpp:]
		for c := range bpp {
			a[c] += uint64(row[x+c])
		}
	}
}

func addStraight(acc []uint64, row []byte, k int) {
	for x := 0; x+4 <= len(row); x += 4 {
		a := acc[(x/4/k)*4:]
		alpha := uint64(row[x+3])
		a[0] += uint64(row[x]) * alpha
		a[1] += uint64(row[x+1]) * alpha
		a[2] += uint64(row[x+2]) * alpha
		a[3] += alpha
	}
}

// orient applies EXIF orientation o (1–8) so the image displays upright.
func (r raster) orient(o int) raster {
	if o < 2 || o > 8 {
		return r
	}
	if r.kind == kindYCbCr && o >= 5 {
		switch r.ratio {
		case image.YCbCrSubsampleRatio422:
			r.ratio = image.YCbCrSubsampleRatio440
		case image.YCbCrSubsampleRatio440:
			r.ratio = image.YCbCrSubsampleRatio422
		case image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410:
			// Their transposes have no YCbCr ratio.
			return rgbaRaster(r.image()).orient(o)
		}
	}
	out := raster{kind: r.kind, ratio: r.ratio}
	for _, p := range r.planes {
		out.planes = append(out.planes, orientPlane(p, o))
	}
	return out
}

// orientPlane copies p so that output pixel (x, y) comes from source byte
// base + x*stepX + y*stepY.
func orientPlane(p plane, o int) plane {
	w, h, bpp, s := p.w, p.h, p.bpp, p.stride
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	var base, stepX, stepY int
	switch o {
	case 2: // mirror horizontally
		base, stepX, stepY = (w-1)*bpp, -bpp, s
	case 3: // rotate 180°
		base, stepX, stepY = (h-1)*s+(w-1)*bpp, -bpp, -s
	case 4: // mirror vertically
		base, stepX, stepY = (h-1)*s, bpp, -s
	case 5: // transpose
		base, stepX, stepY = 0, s, bpp
	case 6: // rotate 90° clockwise
		base, stepX, stepY = (h-1)*s, -s, bpp
	case 7: // transverse
		base, stepX, stepY = (h-1)*s+(w-1)*bpp, -s, -bpp
	case 8: // rotate 90° counter-clockwise
		base, stepX, stepY = (w-1)*bpp, s, -bpp
	default:
		return p
	}
	out := plane{pix: make([]byte, dw*dh*bpp), stride: dw * bpp, w: dw, h: dh, bpp: bpp}
	for y := range dh {
		dst := out.pix[y*out.stride : (y+1)*out.stride]
		i := base + y*stepY
		if bpp == 1 {
			for x := range dst {
				dst[x] = p.pix[i]
				i += stepX
			}
			continue
		}
		for x := 0; x < len(dst); x += bpp {
			copy(dst[x:x+bpp], p.pix[i:i+bpp])
			i += stepX
		}
	}
	return out
}

// image returns the raster as a standard image sharing its pixels.
func (r raster) image() image.Image {
	p := r.planes[0]
	rect := image.Rect(0, 0, p.w, p.h)
	switch r.kind {
	case kindGray:
		return &image.Gray{Pix: p.pix, Stride: p.stride, Rect: rect}
	case kindRGBA:
		return &image.RGBA{Pix: p.pix, Stride: p.stride, Rect: rect}
	case kindNRGBA:
		return &image.NRGBA{Pix: p.pix, Stride: p.stride, Rect: rect}
	}
	return &image.YCbCr{
		Y: p.pix, Cb: r.planes[1].pix, Cr: r.planes[2].pix,
		YStride: p.stride, CStride: r.planes[1].stride,
		SubsampleRatio: r.ratio, Rect: rect,
	}
}

// onCanvas places m on a transparent canvas of the given bounds unless it
// already fills them.
func onCanvas(m image.Image, bounds image.Rectangle) image.Image {
	if m.Bounds() == bounds {
		return m
	}
	c := image.NewNRGBA(bounds)
	draw.Draw(c, m.Bounds(), m, m.Bounds().Min, draw.Src)
	return c
}
