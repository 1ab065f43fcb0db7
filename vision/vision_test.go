package vision

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"flag"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata files")

// decodeOut decodes a prepared image with the decoder for its media type.
func decodeOut(t *testing.T, img *Image) image.Image {
	t.Helper()
	c, ok := codecs[img.MediaType]
	if !ok || !modelTypes[img.MediaType] {
		t.Fatalf("output media type %q is not a model type", img.MediaType)
	}
	m, err := c.decode(bytes.NewReader(img.Data))
	if err != nil {
		t.Fatalf("decode output %s: %v", img.MediaType, err)
	}
	if b := m.Bounds(); b.Dx() != img.Width || b.Dy() != img.Height {
		t.Fatalf("output decodes to %v, Image says %dx%d", b, img.Width, img.Height)
	}
	return m
}

// markedCorners names the corners of m whose pixel 2 px in from the edges is
// marked (green channel low: red and magenta marks on white).
func markedCorners(m image.Image) string {
	b := m.Bounds()
	pts := []struct {
		name string
		x, y int
	}{
		{"top-left", b.Min.X + 2, b.Min.Y + 2},
		{"top-right", b.Max.X - 3, b.Min.Y + 2},
		{"bottom-left", b.Min.X + 2, b.Max.Y - 3},
		{"bottom-right", b.Max.X - 3, b.Max.Y - 3},
	}
	var got []string
	for _, p := range pts {
		c := color.NRGBAModel.Convert(m.At(p.x, p.y)).(color.NRGBA)
		if c.G < 100 {
			got = append(got, p.name)
		}
	}
	return strings.Join(got, ",")
}

func TestSniff(t *testing.T) {
	small := marked(8, 8, 2)
	tests := []struct {
		name string
		data []byte
		want string
		err  error
	}{
		{"png", encodePNG(t, small), TypePNG, nil},
		{"jpeg", encodeJPEG(t, small, 90), TypeJPEG, nil},
		{"gif89a", encodeGIF(t, small), TypeGIF, nil},
		{"gif87a", []byte("GIF87a\x01\x00\x01\x00\x00\x00\x00"), TypeGIF, nil},
		{"webp", webpMarked(8, 8, 2), TypeWebP, nil},
		{"bmp", encodeBMP(t, small), TypeBMP, nil},
		{"tiff little-endian", encodeTIFF(t, small), TypeTIFF, nil},
		{"tiff big-endian", tiffRGB(binary.BigEndian, small, 0), TypeTIFF, nil},
		{"heic major brand", heicHeader("heic", "mif1", "heic"), TypeHEIC, nil},
		{"heic compatible brand", heicHeader("mif1", "mif1", "heic"), TypeHEIC, nil},
		{"heif", heicHeader("mif1", "mif1"), TypeHEIF, nil},
		{"avif", heicHeader("avif", "mif1", "avif"), "", ErrUnsupported},
		{"mp4", heicHeader("isom", "isom", "mp41"), "", ErrUnsupported},
		{"empty", nil, "", ErrCorrupt},
		{"text starting BM", []byte("BMW drivers are a known quantity, said nobody"), "", ErrUnsupported},
		{"riff wave", []byte("RIFF\x24\x00\x00\x00WAVEfmt "), "", ErrUnsupported},
		{"short png prefix", []byte("\x89PN"), "", ErrUnsupported},
		{"pdf", []byte("%PDF-1.7\n"), "", ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Sniff(tt.data)
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Fatalf("Sniff error = %v, want %v", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("Sniff = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPrepareFormats(t *testing.T) {
	small := marked(64, 32, 8)
	paletted := image.NewPaletted(small.Rect, palette.Plan9)
	for y := range 32 {
		for x := range 64 {
			paletted.Set(x, y, small.At(x, y))
		}
	}
	tests := []struct {
		name      string
		data      []byte
		source    string
		media     string
		changed   bool
		w, h      int
		corners   string // marked corners in the output
		firstByte byte   // for animated GIF: expected palette entry of frame 1
	}{
		{"png passes through", encodePNG(t, small), TypePNG, TypePNG, false, 64, 32, "top-left", 0},
		{"jpeg passes through", encodeJPEG(t, small, 90), TypeJPEG, TypeJPEG, false, 64, 32, "top-left", 0},
		{"gif passes through", encodeGIF(t, paletted), TypeGIF, TypeGIF, false, 64, 32, "top-left", 0},
		{"webp passes through", webpMarked(64, 32, 8), TypeWebP, TypeWebP, false, 64, 32, "top-left", 0},
		{"bmp becomes png", encodeBMP(t, small), TypeBMP, TypePNG, true, 64, 32, "top-left", 0},
		{"tiff becomes png", encodeTIFF(t, small), TypeTIFF, TypePNG, true, 64, 32, "top-left", 0},
		{"big-endian tiff becomes png", tiffRGB(binary.BigEndian, small, 0), TypeTIFF, TypePNG, true, 64, 32, "top-left", 0},
		{"paletted bmp becomes png", encodeBMP(t, paletted), TypeBMP, TypePNG, true, 64, 32, "top-left", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := bytes.Clone(tt.data)
			img, err := Prepare(tt.data, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(tt.data, in) {
				t.Fatal("Prepare modified its input")
			}
			if img.SourceType != tt.source || img.MediaType != tt.media || img.Changed != tt.changed {
				t.Errorf("source %s media %s changed %v, want %s %s %v",
					img.SourceType, img.MediaType, img.Changed, tt.source, tt.media, tt.changed)
			}
			if img.Width != tt.w || img.Height != tt.h || img.SourceWidth != tt.w || img.SourceHeight != tt.h {
				t.Errorf("size %dx%d from %dx%d, want %dx%d", img.Width, img.Height, img.SourceWidth, img.SourceHeight, tt.w, tt.h)
			}
			if img.Orientation != 1 {
				t.Errorf("orientation %d, want 1", img.Orientation)
			}
			if !img.Changed && !bytes.Equal(img.Data, tt.data) {
				t.Error("unchanged image has different bytes")
			}
			if got := markedCorners(decodeOut(t, img)); got != tt.corners {
				t.Errorf("marked corners %q, want %q", got, tt.corners)
			}
		})
	}
}

func TestPrepareAnimatedGIF(t *testing.T) {
	data := animatedGIF(t, 40, 30, 3)
	img, err := Prepare(data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if img.MediaType != TypePNG || !img.Changed || img.Width != 40 || img.Height != 30 {
		t.Fatalf("got %s changed=%v %dx%d, want first frame as 40x30 png", img.MediaType, img.Changed, img.Width, img.Height)
	}
	m := decodeOut(t, img)
	want := color.NRGBAModel.Convert(palette.Plan9[1])
	if got := color.NRGBAModel.Convert(m.At(20, 15)); got != want {
		t.Errorf("pixel %v, want first frame's colour %v", got, want)
	}
}

func TestPrepareGIFFrameSmallerThanScreen(t *testing.T) {
	// Frame 1 covers only the right half of a 20x10 screen.
	var b bytes.Buffer
	f1 := image.NewPaletted(image.Rect(10, 0, 20, 10), palette.Plan9)
	f2 := image.NewPaletted(image.Rect(0, 0, 20, 10), palette.Plan9)
	for i := range f1.Pix {
		f1.Pix[i] = 5
	}
	g := &gif.GIF{
		Image:  []*image.Paletted{f1, f2},
		Delay:  []int{10, 10},
		Config: image.Config{Width: 20, Height: 10}, // the logical screen
	}
	if err := gif.EncodeAll(&b, g); err != nil {
		t.Fatal(err)
	}
	img, err := Prepare(b.Bytes(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := decodeOut(t, img)
	if img.Width != 20 || img.Height != 10 {
		t.Fatalf("size %dx%d, want the 20x10 screen", img.Width, img.Height)
	}
	if _, _, _, a := m.At(2, 5).RGBA(); a != 0 {
		t.Errorf("left half alpha %d, want transparent", a)
	}
	if got, want := color.NRGBAModel.Convert(m.At(15, 5)), color.NRGBAModel.Convert(palette.Plan9[5]); got != want {
		t.Errorf("right half %v, want %v", got, want)
	}
}

func TestPrepareWrongExtension(t *testing.T) {
	// Files are only a way to show that names play no part: Prepare sees
	// bytes, and the files stay as they were.
	dir := t.TempDir()
	files := map[string][]byte{
		"photo.png": encodeJPEG(t, marked(16, 16, 4), 90),
		"scan.jpg":  encodeTIFF(t, marked(16, 16, 4)),
		"anim.webp": animatedGIF(t, 16, 16, 2),
		"pic.heic":  encodePNG(t, marked(16, 16, 4)),
	}
	want := map[string]string{"photo.png": TypeJPEG, "scan.jpg": TypeTIFF, "anim.webp": TypeGIF, "pic.heic": TypePNG}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-time.Hour).Truncate(time.Second)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		read, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := Prepare(read, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if img.SourceType != want[name] {
			t.Errorf("%s: source type %s, want %s", name, img.SourceType, want[name])
		}
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		now, _ := os.ReadFile(p)
		if !st.ModTime().Equal(old) || !bytes.Equal(now, data) {
			t.Errorf("%s: file changed", name)
		}
	}
}

func TestPrepareOrientation(t *testing.T) {
	src := marked(64, 32, 8) // red square top-left as stored
	jpg := encodeJPEG(t, src, 95)
	pngData := encodePNG(t, src)
	tests := []struct {
		name    string
		data    []byte
		orient  int
		media   string
		w, h    int
		corners string
	}{
		{"jpeg 1", withAPP1(jpg, exifBlock(binary.LittleEndian, 1)), 1, TypeJPEG, 64, 32, "top-left"},
		{"jpeg 2 mirror", withAPP1(jpg, exifBlock(binary.LittleEndian, 2)), 2, TypeJPEG, 64, 32, "top-right"},
		{"jpeg 3 rotate 180", withAPP1(jpg, exifBlock(binary.BigEndian, 3)), 3, TypeJPEG, 64, 32, "bottom-right"},
		{"jpeg 4 flip", withAPP1(jpg, exifBlock(binary.LittleEndian, 4)), 4, TypeJPEG, 64, 32, "bottom-left"},
		{"jpeg 5 transpose", withAPP1(jpg, exifBlock(binary.BigEndian, 5)), 5, TypeJPEG, 32, 64, "top-left"},
		{"jpeg 6 little-endian", withAPP1(jpg, exifBlock(binary.LittleEndian, 6)), 6, TypeJPEG, 32, 64, "top-right"},
		{"jpeg 6 big-endian", withAPP1(jpg, exifBlock(binary.BigEndian, 6)), 6, TypeJPEG, 32, 64, "top-right"},
		{"jpeg 7 transverse", withAPP1(jpg, exifBlock(binary.LittleEndian, 7)), 7, TypeJPEG, 32, 64, "bottom-right"},
		{"jpeg 8 rotate 270", withAPP1(jpg, exifBlock(binary.BigEndian, 8)), 8, TypeJPEG, 32, 64, "bottom-left"},
		{"jpeg invalid value 9", withAPP1(jpg, exifBlock(binary.LittleEndian, 9)), 1, TypeJPEG, 64, 32, "top-left"},
		{"tiff 6 little-endian", tiffRGB(binary.LittleEndian, src, 6), 6, TypePNG, 32, 64, "top-right"},
		{"tiff 8 big-endian", tiffRGB(binary.BigEndian, src, 8), 8, TypePNG, 32, 64, "bottom-left"},
		{"png eXIf 6", withPNGChunk(pngData, "eXIf", exifBlock(binary.BigEndian, 6)), 6, TypePNG, 32, 64, "top-right"},
		{"webp EXIF 3", riffWebP(
			"VP8X", vp8x(0x08, 64, 32),
			"VP8L", vp8l(64, 32, 255, 255, 255, 0, 255, func(x, y int) bool { return x >= 8 || y >= 8 }),
			"EXIF", exifBlock(binary.LittleEndian, 3)), 3, TypePNG, 64, 32, "bottom-right"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := Prepare(tt.data, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if img.Orientation != tt.orient || img.MediaType != tt.media {
				t.Errorf("orientation %d media %s, want %d %s", img.Orientation, img.MediaType, tt.orient, tt.media)
			}
			if img.Changed != (tt.orient != 1 || img.SourceType == TypeTIFF) {
				t.Errorf("changed = %v", img.Changed)
			}
			if img.Width != tt.w || img.Height != tt.h || img.SourceWidth != 64 || img.SourceHeight != 32 {
				t.Errorf("size %dx%d from %dx%d, want %dx%d from 64x32",
					img.Width, img.Height, img.SourceWidth, img.SourceHeight, tt.w, tt.h)
			}
			if got := markedCorners(decodeOut(t, img)); got != tt.corners {
				t.Errorf("marked corners %q, want %q", got, tt.corners)
			}
		})
	}
}

func TestPrepareOrientationWithResize(t *testing.T) {
	// A portrait phone photo stored landscape: orientation 6, too large.
	data := withAPP1(encodeJPEG(t, marked(2100, 1400, 300), 90), exifBlock(binary.LittleEndian, 6))
	img, err := Prepare(data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if img.Width != 1365 || img.Height != 2048 || img.MediaType != TypeJPEG {
		t.Fatalf("got %s %dx%d, want image/jpeg 1365x2048", img.MediaType, img.Width, img.Height)
	}
	if got := markedCorners(decodeOut(t, img)); got != "top-right" {
		t.Errorf("marked corners %q, want top-right", got)
	}
}

func TestPrepareDownsample(t *testing.T) {
	alpha := image.NewNRGBA(image.Rect(0, 0, 900, 300))
	for y := range 300 {
		for x := range 900 {
			if x < 450 {
				// Invisible red must not bleed into the blue half.
				alpha.SetNRGBA(x, y, color.NRGBA{255, 0, 0, 0})
			} else {
				alpha.SetNRGBA(x, y, color.NRGBA{0, 0, 255, 255})
			}
		}
	}
	tests := []struct {
		name    string
		data    []byte
		opt     Options
		media   string
		w, h    int
		corners string
	}{
		{"png 3000x1000", encodePNG(t, markedGray(3000, 1000, 200)), Options{}, TypePNG, 2048, 683, "top-left"},
		{"jpeg 2200x1000 stays jpeg", encodeJPEG(t, marked(2200, 1000, 200), 90), Options{}, TypeJPEG, 2048, 931, "top-left"},
		{"gray png portrait", encodePNG(t, markedGray(700, 2100, 200)), Options{}, TypePNG, 683, 2048, "top-left"},
		{"rgba png", encodePNG(t, marked(1500, 500, 100)), Options{MaxSide: 1000}, TypePNG, 1000, 333, "top-left"},
		{"box then resize", encodePNG(t, markedGray(2600, 500, 150)), Options{MaxSide: 256}, TypePNG, 256, 49, "top-left"},
		{"jpeg box then resize", encodeJPEG(t, marked(1501, 999, 250), 90), Options{MaxSide: 150}, TypeJPEG, 150, 100, "top-left"},
		{"webp box", webpMarked(1000, 600, 300), Options{MaxSide: 100}, TypePNG, 100, 60, "top-left"},
		{"gif single frame", encodeGIF(t, marked(300, 200, 60)), Options{MaxSide: 150}, TypePNG, 150, 100, "top-left"},
		{"exact fit untouched", encodePNG(t, marked(2048, 10, 5)), Options{}, TypePNG, 2048, 10, "top-left"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := Prepare(tt.data, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if img.MediaType != tt.media || img.Width != tt.w || img.Height != tt.h {
				t.Fatalf("got %s %dx%d, want %s %dx%d", img.MediaType, img.Width, img.Height, tt.media, tt.w, tt.h)
			}
			if got := markedCorners(decodeOut(t, img)); got != tt.corners {
				t.Errorf("marked corners %q, want %q", got, tt.corners)
			}
		})
	}

	t.Run("transparent edges", func(t *testing.T) {
		for _, side := range []int{300, 90} { // plain resize, then box first
			img, err := Prepare(encodePNG(t, alpha), Options{MaxSide: side})
			if err != nil {
				t.Fatal(err)
			}
			m := decodeOut(t, img)
			for x := range img.Width {
				c := color.NRGBAModel.Convert(m.At(x, img.Height/2)).(color.NRGBA)
				if c.A > 0 && c.R > 2 {
					t.Fatalf("side %d: pixel %d is %v: transparent red bled in", side, x, c)
				}
			}
		}
	})
}

func TestPrepareTranscodeChoice(t *testing.T) {
	// Photo-like content from a format the model refuses is sent as JPEG,
	// since its PNG would be several times larger; drawings stay PNG.
	photoBMP := encodeBMP(t, photo(900, 700))
	img, err := Prepare(photoBMP, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if img.MediaType != TypeJPEG || img.Width != 900 || img.Height != 700 {
		t.Errorf("photo bmp -> %s %dx%d, want image/jpeg 900x700", img.MediaType, img.Width, img.Height)
	}
	drawing, err := Prepare(encodeBMP(t, marked(900, 700, 100)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if drawing.MediaType != TypePNG {
		t.Errorf("drawing bmp -> %s, want image/png", drawing.MediaType)
	}
}

func TestPrepareTooManyPixels(t *testing.T) {
	tests := []struct {
		name string
		data []byte
	}{
		{"png 60000x60000", pngHeader(60000, 60000)},
		{"jpeg 60000x60000", jpegHeader(60000, 60000)},
		{"webp 16384x16384", riffWebP("VP8X", vp8x(0, 16384, 16384))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The allocation bound is the proof that nothing was decoded:
			// the pixels alone would take gigabytes.
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Prepare(tt.data, Options{})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooManyPixels) {
				t.Fatalf("err = %v, want ErrTooManyPixels", err)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%v; allocated %d bytes", err, alloc)
			if alloc > 1<<20 {
				t.Errorf("allocated %d bytes refusing a header", alloc)
			}
		})
	}

	t.Run("limit is inclusive", func(t *testing.T) {
		data := encodePNG(t, marked(100, 100, 10))
		if _, err := Prepare(data, Options{MaxPixels: 10_000}); err != nil {
			t.Errorf("10000 pixels at limit 10000: %v", err)
		}
		if _, err := Prepare(data, Options{MaxPixels: 9_999}); !errors.Is(err, ErrTooManyPixels) {
			t.Errorf("10000 pixels at limit 9999: %v, want ErrTooManyPixels", err)
		}
	})
}

func TestPrepareErrors(t *testing.T) {
	pngData := encodePNG(t, photo(64, 64))
	jpg := encodeJPEG(t, photo(64, 64), 90)
	badCRC := bytes.Clone(pngData)
	badCRC[len(badCRC)-20] ^= 0xff // inside IDAT
	tiffData := encodeTIFF(t, photo(64, 64))
	bmpData := encodeBMP(t, photo(64, 64))
	gifData := encodeGIF(t, photo(64, 64))
	webpData := webpMarked(64, 64, 8)
	tests := []struct {
		name string
		data []byte
		opt  Options
		err  error
		msg  string // substring the message must carry
	}{
		{"empty", nil, Options{}, ErrCorrupt, "empty"},
		{"too large default", make([]byte, DefaultMaxBytes+1), Options{}, ErrTooLarge, "limit"},
		{"too large option", pngData, Options{MaxBytes: 100}, ErrTooLarge, "100 byte limit"},
		{"not an image", []byte("hello, world"), Options{}, ErrUnsupported, "unknown signature"},
		{"heic", heicHeader("heic", "mif1", "heic"), Options{}, ErrUnsupported, "unsupported format image/heic: no pure-Go HEIC decoder"},
		{"heif", heicHeader("mif1", "mif1"), Options{}, ErrUnsupported, "image/heif: no pure-Go HEIC decoder"},
		{"animated webp", riffWebP("VP8X", vp8x(0x02, 8, 8), "ANIM", make([]byte, 6)), Options{}, ErrUnsupported, "animated"},
		{"png truncated in data", pngData[:len(pngData)/2], Options{}, ErrCorrupt, "decode image/png"},
		{"png truncated in header", pngData[:20], Options{}, ErrCorrupt, "read header of image/png"},
		{"png bad crc", badCRC, Options{}, ErrCorrupt, "checksum"},
		{"png without data", pngHeader(10, 10), Options{}, ErrCorrupt, "png"},
		{"png zero size", pngHeader(0, 10), Options{}, ErrCorrupt, "png"},
		{"jpeg truncated", jpg[:len(jpg)/2], Options{}, ErrCorrupt, "decode image/jpeg"},
		{"jpeg header only", jpegHeader(100, 100), Options{}, ErrCorrupt, "image/jpeg"},
		{"jpeg garbage", []byte("\xff\xd8\xff\xe0garbage garbage"), Options{}, ErrCorrupt, "image/jpeg"},
		{"gif truncated", gifData[:len(gifData)/2], Options{}, ErrCorrupt, "image/gif"},
		{"webp truncated", webpData[:len(webpData)-3], Options{}, ErrCorrupt, "image/webp"},
		{"bmp truncated", bmpData[:len(bmpData)/2], Options{}, ErrCorrupt, "image/bmp"},
		{"tiff truncated", tiffData[:len(tiffData)/2], Options{}, ErrCorrupt, "image/tiff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := Prepare(tt.data, tt.opt)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if img != nil {
				t.Error("non-nil image with an error")
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("message %q lacks %q", err, tt.msg)
			}
		})
	}
}

func TestDataURL(t *testing.T) {
	img := &Image{Data: []byte{0x89, 'P', 'N', 'G'}, MediaType: TypePNG}
	want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(img.Data)
	if got := img.DataURL(); got != want {
		t.Errorf("DataURL = %q, want %q", got, want)
	}
}

func TestExtensionFor(t *testing.T) {
	for mt, want := range map[string]string{
		TypePNG: ".png", TypeJPEG: ".jpg", TypeWebP: ".webp", TypeGIF: ".gif", TypeBMP: ".bmp",
		TypeTIFF: ".tiff", TypeHEIC: ".heic", TypeHEIF: ".heif", "image/avif": ".bin", "": ".bin",
	} {
		if got := ExtensionFor(mt); got != want {
			t.Errorf("ExtensionFor(%q) = %q, want %q", mt, got, want)
		}
	}
}

// TestWebPTestdata checks the committed WebP file, a hand-assembled lossless
// image (see vp8l), against its generator; -update rewrites it.
func TestWebPTestdata(t *testing.T) {
	path := filepath.Join("testdata", "marked.webp")
	want := webpMarked(24, 16, 6)
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) {
		t.Fatalf("%s differs from webpMarked(24, 16, 6); run with -update", path)
	}
	img, err := Prepare(data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := decodeOut(t, img)
	if got := color.NRGBAModel.Convert(m.At(0, 0)); got != (color.NRGBA{255, 0, 255, 255}) {
		t.Errorf("corner %v, want magenta", got)
	}
	if got := color.NRGBAModel.Convert(m.At(23, 15)); got != (color.NRGBA{255, 255, 255, 255}) {
		t.Errorf("far corner %v, want white", got)
	}
}

func TestPrepareKeepsAlphaAsPNG(t *testing.T) {
	// Guards the photo rule's inverse: an image with transparency is never
	// turned into JPEG, however large its PNG.
	m := photo(900, 700)
	for i := 3; i < len(m.Pix); i += 4 * 7 {
		m.Pix[i] = 128
		m.Pix[i-1] /= 2
		m.Pix[i-2] /= 2
		m.Pix[i-3] /= 2
	}
	img, err := Prepare(encodeTIFF(t, m), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if img.MediaType != TypePNG {
		t.Fatalf("got %s, want image/png for a translucent image", img.MediaType)
	}
	if _, err := png.DecodeConfig(bytes.NewReader(img.Data)); err != nil {
		t.Fatal(err)
	}
}

// TestPrepareBudgetsMemory: a small file under the pixel limit can still
// decode into hundreds of megabytes at 16 bits per channel; the header says
// so, and Prepare refuses it before decoding.
func TestPrepareBudgetsMemory(t *testing.T) {
	data := zeroPNG(t, 6000, 6000, 16, 6) // 36 Mpx, under the 40 Mpx limit
	if len(data) > 512<<10 {
		t.Fatalf("fixture is %d bytes", len(data))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	img, err := Prepare(data, Options{})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooMuchMemory) {
		t.Fatalf("Prepare = %+v, %v; want ErrTooMuchMemory", img, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("allocated %d bytes refusing from the header", alloc)
	}
	for _, want := range []string{"image/png is 6000x6000", "16-bit RGBA", "412 MiB", "over the 256 MiB image memory limit"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	// The budget is configurable, and an image within it decodes.
	small := zeroPNG(t, 400, 400, 16, 6) // resized: 1.28 MB decoded + 0.64 MB working copy
	if _, err := Prepare(small, Options{MaxDecodeBytes: 1800 << 10, MaxSide: 200}); !errors.Is(err, ErrTooMuchMemory) {
		t.Errorf("1.92 MB decode under a 1.8 MiB budget: %v", err)
	}
	img, err = Prepare(small, Options{MaxDecodeBytes: 2 << 20, MaxSide: 200})
	if err != nil {
		t.Fatalf("1.92 MB decode under a 2 MiB budget: %v", err)
	}
	if img.Width != 200 || img.Height != 200 {
		t.Errorf("prepared %dx%d", img.Width, img.Height)
	}
	// The same pixel count at 8 bits passes where 16 bits did not.
	if _, err := Prepare(zeroPNG(t, 400, 400, 8, 6), Options{MaxDecodeBytes: 1 << 20, MaxSide: 200}); err != nil {
		t.Errorf("8-bit RGBA 400x400 under 1 MiB: %v", err)
	}
}

func TestDecodeCost(t *testing.T) {
	const w, h = 1000, 1000
	progressive := func(sampling byte) []byte {
		b := jpegHeader(w, h)
		i := bytes.Index(b, []byte{0xff, 0xc0})
		b[i+1] = 0xc2
		b[i+11] = sampling
		return b
	}
	withInterlace := func(b []byte) []byte {
		b = bytes.Clone(b)
		b[28] = 1
		return b
	}
	rgba16 := image.Config{Width: w, Height: h, ColorModel: color.NRGBA64Model}
	tests := []struct {
		name string
		typ  string
		cfg  image.Config
		data []byte
		work bool
		want int64
		what string
	}{
		{"8-bit gray", TypePNG, image.Config{Width: w, Height: h, ColorModel: color.GrayModel}, pngHeader(w, h), true, 1_000_000, "8-bit gray"},
		{"16-bit gray gets an 8-bit copy", TypePNG, image.Config{Width: w, Height: h, ColorModel: color.Gray16Model}, pngHeader(w, h), true, 3_000_000, "16-bit gray"},
		{"16-bit RGBA passing through", TypePNG, rgba16, pngHeader(w, h), false, 8_000_000, "16-bit RGBA"},
		{"16-bit RGBA resized", TypePNG, rgba16, pngHeader(w, h), true, 12_000_000, "16-bit RGBA"},
		{"interlaced", TypePNG, rgba16, withInterlace(pngHeader(w, h)), false, 16_000_000, "interlaced 16-bit RGBA"},
		{"paletted", TypeGIF, image.Config{Width: w, Height: h, ColorModel: color.Palette(palette.Plan9)}, nil, true, 5_000_000, "paletted"},
		{"baseline jpeg 4:2:0", TypeJPEG, image.Config{Width: w, Height: h, ColorModel: color.YCbCrModel}, jpegHeader(w, h), true, 1_500_000, "YCbCr"},
		{"progressive jpeg 4:2:0", TypeJPEG, image.Config{Width: w, Height: h, ColorModel: color.YCbCrModel}, progressive(0x22), true, 7_500_000, "progressive YCbCr"},
		{"progressive jpeg 4:4:4", TypeJPEG, image.Config{Width: w, Height: h, ColorModel: color.YCbCrModel}, progressive(0x11), true, 15_000_000, "progressive YCbCr"},
		{"tiff strip buffer", TypeTIFF, image.Config{Width: w, Height: h, ColorModel: color.RGBAModel}, nil, false, 8_000_000, "8-bit RGBA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, what := decodeCost(tt.typ, tt.cfg, tt.data, tt.work)
			if got != tt.want || what != tt.what {
				t.Errorf("decodeCost = %d, %q; want %d, %q", got, what, tt.want, tt.what)
			}
		})
	}
}
