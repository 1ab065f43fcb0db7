package vision

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

func fuzzSeeds(f *testing.F) {
	m := marked(12, 8, 3)
	jpg := encodeJPEG(f, m, 80)
	pngData := encodePNG(f, m)
	for _, seed := range [][]byte{
		pngData,
		withPNGChunk(pngData, "eXIf", exifBlock(binary.BigEndian, 6)),
		jpg,
		withAPP1(jpg, exifBlock(binary.LittleEndian, 6)),
		withAPP1(jpg, exifBlock(binary.BigEndian, 8)),
		encodeGIF(f, m),
		animatedGIF(f, 6, 4, 3),
		webpMarked(12, 8, 3),
		riffWebP("VP8X", vp8x(0x08, 12, 8),
			"VP8L", vp8l(12, 8, 0, 0, 255, 0, 255, func(x, y int) bool { return x > y }),
			"EXIF", exifBlock(binary.LittleEndian, 3)),
		encodeBMP(f, m),
		encodeTIFF(f, m),
		tiffRGB(binary.BigEndian, m, 6),
		heicHeader("heic", "mif1", "heic"),
		pngHeader(60000, 60000),
		jpegHeader(100, 100),
	} {
		f.Add(seed)
	}
}

// FuzzPrepare checks that no input panics and that whatever Prepare accepts
// is a decodable model image within the limits.
func FuzzPrepare(f *testing.F) {
	fuzzSeeds(f)
	opt := Options{MaxPixels: 1 << 20, MaxSide: 64, MaxDecodeBytes: 4 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		img, err := Prepare(data, opt)
		if !bytes.Equal(in, data) {
			t.Fatal("Prepare modified its input")
		}
		if err != nil {
			if img != nil {
				t.Fatal("image and error both returned")
			}
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) &&
				!errors.Is(err, ErrTooManyPixels) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrTooMuchMemory) {
				t.Fatalf("error without a sentinel: %v", err)
			}
			return
		}
		if !modelTypes[img.MediaType] {
			t.Fatalf("output type %s", img.MediaType)
		}
		if max(img.Width, img.Height) > opt.MaxSide {
			t.Fatalf("output %dx%d over MaxSide", img.Width, img.Height)
		}
		if !img.Changed && !bytes.Equal(img.Data, data) {
			t.Fatal("unchanged output differs from input")
		}
		cfg, err := codecs[img.MediaType].config(bytes.NewReader(img.Data))
		if err != nil {
			t.Fatalf("output does not decode: %v", err)
		}
		if cfg.Width != img.Width || cfg.Height != img.Height {
			t.Fatalf("output is %dx%d, Image says %dx%d", cfg.Width, cfg.Height, img.Width, img.Height)
		}
	})
}

// FuzzMetadata runs the hand-written container and EXIF parsers on their
// own, where the fuzzer reaches them without having to make a valid image.
func FuzzMetadata(f *testing.F) {
	fuzzSeeds(f)
	f.Add(exifBlock(binary.LittleEndian, 6))
	f.Fuzz(func(t *testing.T, data []byte) {
		for name, o := range map[string]int{
			"jpeg": jpegOrientation(data),
			"tiff": tiffOrientation(data),
			"png":  pngOrientation(data),
			"webp": scanWebP(data).orientation,
		} {
			if o < 1 || o > 8 {
				t.Fatalf("%s orientation %d", name, o)
			}
		}
		if n := gifFrames(data); n < 0 || n > 2 {
			t.Fatalf("gifFrames = %d", n)
		}
		if f, ok := jpegFrameOf(data); ok && (f.samples < 8 || f.samples > 8*255) {
			t.Fatalf("jpeg frame samples %d/8 per pixel", f.samples)
		}
		if mt, err := Sniff(data); (mt == "") == (err == nil) {
			t.Fatalf("Sniff = %q, %v", mt, err)
		}
	})
}
