package vision

import (
	"fmt"
	"image"
	"image/color"
)

// A decoded image takes width × height × bytes per pixel, and the bytes
// per pixel come from the header: a 16-bit RGBA PNG takes 8, twice an 8-bit
// one, and a progressive JPEG keeps every DCT coefficient (4 bytes a
// sample) until its last scan. The pixel limit alone lets a small file
// decode into hundreds of megabytes, so Prepare also budgets the bytes.

// decodeCost estimates the peak memory of decoding an image and preparing
// it: the decoder's output and scratch, plus the 8-bit working copy that
// resizing or rotating a layout other than Gray, RGBA, NRGBA and YCbCr
// takes (work tells whether the image will be resized or rotated). what
// names the pixel format for error messages.
func decodeCost(typ string, cfg image.Config, data []byte, work bool) (cost int64, what string) {
	px := int64(cfg.Width) * int64(cfg.Height)
	// eighths of a byte per pixel, so that subsampled chroma is exact
	var decoded, scratch, working int64
	native := false
	switch m := cfg.ColorModel; {
	case isPalette(m):
		decoded, what = 8, "paletted"
	case m == color.GrayModel:
		decoded, what, native = 8, "8-bit gray", true
	case m == color.Gray16Model:
		decoded, what, working = 16, "16-bit gray", 8 // converted to 8-bit gray
	case m == color.AlphaModel:
		decoded, what = 8, "8-bit alpha"
	case m == color.Alpha16Model:
		decoded, what = 16, "16-bit alpha"
	case m == color.RGBAModel || m == color.NRGBAModel:
		decoded, what, native = 32, "8-bit RGBA", true
	case m == color.RGBA64Model || m == color.NRGBA64Model:
		decoded, what = 64, "16-bit RGBA"
	case m == color.CMYKModel:
		decoded, what = 32, "CMYK"
	case m == color.YCbCrModel:
		decoded, what, native = 24, "YCbCr", true // 4:4:4 unless the frame says less
	case m == color.NYCbCrAModel:
		decoded, what = 32, "YCbCr with alpha"
	default:
		decoded, what = 64, "unknown pixel format"
	}
	switch typ {
	case TypeJPEG:
		if f, ok := jpegFrameOf(data); ok {
			decoded = f.samples
			if f.progressive {
				// one int32 coefficient per sample, kept for all scans
				scratch = 4 * f.samples
				what = "progressive " + what
			}
		}
	case TypePNG:
		if len(data) > 28 && data[28] == 1 {
			// Adam7: each pass is decoded into an image of its own
			// before being merged into the result.
			scratch = decoded
			what = "interlaced " + what
		}
	case TypeTIFF:
		// a strip or tile is decompressed whole before it is unpacked
		scratch = decoded
	case TypeGIF:
		if work {
			working = 32 // a frame smaller than the screen goes on an NRGBA canvas
		}
	}
	if work && !native && working == 0 {
		working = 32
	}
	if !work {
		working = 0
	}
	return px * (decoded + scratch + working) / 8, what
}

func isPalette(m color.Model) bool {
	_, ok := m.(color.Palette)
	return ok
}

type jpegFrame struct {
	progressive bool
	samples     int64 // eighths of a sample per pixel, over all components
}

// jpegFrameOf reads the frame header (SOFn) for the components' sampling
// factors and the coding process.
func jpegFrameOf(data []byte) (jpegFrame, bool) {
	var f jpegFrame
	var ok bool
	walkJPEG(data, func(marker byte, seg []byte) bool {
		// SOF0..SOF15 except DHT (c4), JPG (c8) and DAC (cc)
		if marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc {
			f, ok = parseSOF(seg, marker == 0xc2 || marker == 0xc6 || marker == 0xca || marker == 0xce)
			return true
		}
		return false
	})
	return f, ok
}

func parseSOF(seg []byte, progressive bool) (jpegFrame, bool) {
	if len(seg) < 6 {
		return jpegFrame{}, false
	}
	nc := int(seg[5])
	if nc < 1 || len(seg) < 6+3*nc {
		return jpegFrame{}, false
	}
	var hmax, vmax int64 = 1, 1
	for i := range nc {
		f := seg[6+3*i+1]
		hmax, vmax = max(hmax, int64(f>>4)), max(vmax, int64(f&15))
	}
	var s int64
	for i := range nc {
		f := seg[6+3*i+1]
		h, v := max(int64(f>>4), 1), max(int64(f&15), 1)
		s += 8 * h * v / (hmax * vmax)
	}
	return jpegFrame{progressive: progressive, samples: max(s, 8)}, true
}

// checkMemory refuses an image whose decode would take more than the
// budget.
func checkMemory(typ string, cfg image.Config, data []byte, work bool, budget int64) error {
	cost, what := decodeCost(typ, cfg, data, work)
	if cost <= budget {
		return nil
	}
	return fmt.Errorf("%s is %dx%d, %s: decoding it takes about %d MiB, over the %d MiB image memory limit: %w",
		typ, cfg.Width, cfg.Height, what, mib(cost), mib(budget), ErrTooMuchMemory)
}

func mib(n int64) int64 { return (n + 1<<20 - 1) >> 20 }
