package vision

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

// Fixtures are generated here so every test input is visible in code.

var red = color.NRGBA{255, 0, 0, 255}

// marked returns a white w×h image with a red s×s square in the top-left
// corner, so tests can tell where that corner ends up.
func marked(w, h, s int) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range m.Pix {
		m.Pix[i] = 255
	}
	for y := range min(s, h) {
		for x := range min(s, w) {
			m.SetNRGBA(x, y, red)
		}
	}
	return m
}

// markedGray is marked in grayscale, a quarter of the bytes for tests that
// only need size and position.
func markedGray(w, h, s int) *image.Gray {
	m := image.NewGray(image.Rect(0, 0, w, h))
	for i := range m.Pix {
		m.Pix[i] = 255
	}
	for y := range min(s, h) {
		clear(m.Pix[y*m.Stride : y*m.Stride+min(s, w)])
	}
	return m
}

// photo returns a photo-like image: smooth gradients, some texture and
// per-pixel noise, which is what makes real photos expensive to code.
func photo(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(1, 2))
	for y := range h {
		fy := float64(y) / float64(h)
		for x := range w {
			fx := float64(x) / float64(w)
			tex := 20 * math.Sin(fx*40+math.Sin(fy*13)*3) * math.Cos(fy*29)
			n := func() float64 { return float64(rng.IntN(25)) - 12 }
			i := m.PixOffset(x, y)
			m.Pix[i+0] = clamp8(60 + 150*fx + tex + n())
			m.Pix[i+1] = clamp8(40 + 120*fy + 0.5*tex + n())
			m.Pix[i+2] = clamp8(200 - 140*fx*fy - tex + n())
			m.Pix[i+3] = 255
		}
	}
	return m
}

func clamp8(v float64) uint8 { return uint8(max(0, min(255, v))) }

func encodePNG(t testing.TB, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(t testing.TB, m image.Image, q int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeGIF(t testing.TB, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gif.Encode(&b, m, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// animatedGIF has n frames; frame i is w×h filled with palette entry i+1.
func animatedGIF(t testing.TB, w, h, n int) []byte {
	t.Helper()
	g := &gif.GIF{}
	for i := range n {
		f := image.NewPaletted(image.Rect(0, 0, w, h), palette.Plan9)
		for j := range f.Pix {
			f.Pix[j] = uint8(i + 1)
		}
		g.Image = append(g.Image, f)
		g.Delay = append(g.Delay, 10)
	}
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, g); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeBMP(t testing.TB, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := bmp.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeTIFF(t testing.TB, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := tiff.Encode(&b, m, &tiff.Options{Compression: tiff.Deflate}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// exifBlock builds a minimal TIFF structure whose IFD0 holds one
// orientation entry.
func exifBlock(bo binary.ByteOrder, orientation uint16) []byte {
	b := make([]byte, 8+2+12+4)
	if bo == binary.LittleEndian {
		copy(b, "II*\x00")
	} else {
		copy(b, "MM\x00*")
	}
	bo.PutUint32(b[4:], 8)
	bo.PutUint16(b[8:], 1)
	e := b[10:]
	bo.PutUint16(e[0:], tagOrientation)
	bo.PutUint16(e[2:], 3) // SHORT
	bo.PutUint32(e[4:], 1)
	bo.PutUint16(e[8:], orientation)
	return b
}

// withAPP1 inserts an APP1 segment holding an EXIF block right after SOI.
func withAPP1(jpg, exif []byte) []byte {
	body := append([]byte("Exif\x00\x00"), exif...)
	seg := []byte{0xff, 0xe1, 0, 0}
	binary.BigEndian.PutUint16(seg[2:], uint16(len(body)+2))
	out := append([]byte{}, jpg[:2]...)
	out = append(out, seg...)
	out = append(out, body...)
	return append(out, jpg[2:]...)
}

// pngChunk frames a PNG chunk with its length and CRC.
func pngChunk(typ string, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	b = append(b, typ...)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
}

// withPNGChunk inserts a chunk right after IHDR.
func withPNGChunk(p []byte, typ string, data []byte) []byte {
	const afterIHDR = 8 + 8 + 13 + 4
	out := append([]byte{}, p[:afterIHDR]...)
	out = append(out, pngChunk(typ, data)...)
	return append(out, p[afterIHDR:]...)
}

// pngHeader is a PNG that declares w×h but holds no pixel data.
func pngHeader(w, h uint32) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 2, 0, 0, 0) // 8-bit RGB, no interlace
	b := []byte("\x89PNG\r\n\x1a\n")
	b = append(b, pngChunk("IHDR", ihdr)...)
	return append(b, pngChunk("IEND", nil)...)
}

// jpegHeader is a baseline JFIF JPEG that declares w×h (at most 65535) and
// stops after the frame header.
func jpegHeader(w, h uint16) []byte {
	b := []byte{0xff, 0xd8}
	b = append(b, 0xff, 0xe0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0)
	sof := []byte{0xff, 0xc0, 0, 17, 8, 0, 0, 0, 0, 3,
		1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1}
	binary.BigEndian.PutUint16(sof[5:], h)
	binary.BigEndian.PutUint16(sof[7:], w)
	b = append(b, sof...)
	return append(b, 0xff, 0xd9)
}

// bitWriter writes VP8L's least-significant-bit-first bit stream.
type bitWriter struct {
	b     []byte
	nBits uint
}

func (w *bitWriter) write(v uint32, n uint) {
	for i := range n {
		if w.nBits%8 == 0 {
			w.b = append(w.b, 0)
		}
		w.b[len(w.b)-1] |= byte(v>>i&1) << (w.nBits % 8)
		w.nBits++
	}
}

// vp8l hand-assembles a lossless WebP bitstream for a two-colour image:
// every prefix code is a "simple" code, green picks between two values with
// one bit per pixel and red, blue and alpha are constant. on(x, y) selects
// greenOn for a pixel.
func vp8l(w, h int, red, blue, alpha, greenOff, greenOn uint8, on func(x, y int) bool) []byte {
	var bw bitWriter
	bw.write(0x2f, 8)
	bw.write(uint32(w-1), 14)
	bw.write(uint32(h-1), 14)
	bw.write(1, 1) // alpha hint
	bw.write(0, 3) // version
	bw.write(0, 1) // no transform
	bw.write(0, 1) // no colour cache
	bw.write(0, 1) // no meta prefix codes
	simple := func(symbols ...uint8) {
		bw.write(1, 1) // simple code
		bw.write(uint32(len(symbols)-1), 1)
		bw.write(1, 1) // first symbol has 8 bits
		for _, s := range symbols {
			bw.write(uint32(s), 8)
		}
	}
	simple(greenOff, greenOn)
	simple(red)
	simple(blue)
	simple(alpha)
	simple(0) // distance
	for y := range h {
		for x := range w {
			if on(x, y) {
				bw.write(1, 1)
			} else {
				bw.write(0, 1)
			}
		}
	}
	return bw.b
}

// riffWebP wraps chunks (id, body pairs) in a RIFF WEBP container.
func riffWebP(chunks ...any) []byte {
	var body []byte
	body = append(body, "WEBP"...)
	for i := 0; i < len(chunks); i += 2 {
		id, data := chunks[i].(string), chunks[i+1].([]byte)
		body = append(body, id...)
		body = binary.LittleEndian.AppendUint32(body, uint32(len(data)))
		body = append(body, data...)
		if len(data)%2 == 1 {
			body = append(body, 0)
		}
	}
	out := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...)
	return append(out, body...)
}

// webpMarked is a w×h lossless WebP: white with an s×s magenta square at
// the top-left (red, blue and alpha are constant 255; green is 0 inside the
// square and 255 outside).
func webpMarked(w, h, s int) []byte {
	return riffWebP("VP8L", vp8l(w, h, 255, 255, 255, 0, 255, func(x, y int) bool { return x >= s || y >= s }))
}

// vp8x builds a VP8X chunk body with the given flags and canvas size.
func vp8x(flags byte, w, h int) []byte {
	b := make([]byte, 10)
	b[0] = flags
	b[4], b[5], b[6] = byte(w-1), byte((w-1)>>8), byte((w-1)>>16)
	b[7], b[8], b[9] = byte(h-1), byte((h-1)>>8), byte((h-1)>>16)
	return b
}

// heicHeader is the start of an ISO-BMFF file with the given brands.
func heicHeader(major string, compatible ...string) []byte {
	body := append([]byte("ftyp"+major), 0, 0, 0, 0)
	for _, c := range compatible {
		body = append(body, c...)
	}
	b := binary.BigEndian.AppendUint32(nil, uint32(len(body)+4))
	b = append(b, body...)
	// A meta box header follows in real files; its content is irrelevant.
	return append(b, 0, 0, 0, 8, 'm', 'e', 't', 'a')
}

// tiffRGB hand-assembles an uncompressed 8-bit RGB TIFF in either byte order
// with an optional orientation tag (0 leaves it out); x/image/tiff writes
// neither big-endian files nor orientation.
func tiffRGB(bo binary.ByteOrder, m *image.NRGBA, orientation uint16) []byte {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	type entry struct {
		tag, typ uint16
		count    uint32
		value    uint32
	}
	const short, long = 3, 4
	entries := []entry{
		{256, long, 1, uint32(w)},
		{257, long, 1, uint32(h)},
		{258, short, 3, 0}, // value is an offset, set below
		{259, short, 1, 1}, // no compression
		{262, short, 1, 2}, // RGB
		{273, long, 1, 0},  // strip offset, set below
		{274, short, 1, uint32(orientation)},
		{277, short, 1, 3},
		{278, long, 1, uint32(h)},
		{279, long, 1, uint32(w * h * 3)},
	}
	if orientation == 0 {
		entries = append(entries[:6], entries[7:]...)
	}
	ifdSize := 2 + 12*len(entries) + 4
	bpsOff := 8 + ifdSize
	pixOff := bpsOff + 6
	b := make([]byte, pixOff, pixOff+w*h*3)
	if bo == binary.LittleEndian {
		copy(b, "II*\x00")
	} else {
		copy(b, "MM\x00*")
	}
	bo.PutUint32(b[4:], 8)
	bo.PutUint16(b[8:], uint16(len(entries)))
	for i, e := range entries {
		switch e.tag {
		case 258:
			e.value = uint32(bpsOff)
		case 273:
			e.value = uint32(pixOff)
		}
		p := b[10+12*i:]
		bo.PutUint16(p[0:], e.tag)
		bo.PutUint16(p[2:], e.typ)
		bo.PutUint32(p[4:], e.count)
		if e.typ == short && e.count == 1 {
			bo.PutUint16(p[8:], uint16(e.value))
		} else {
			bo.PutUint32(p[8:], e.value)
		}
	}
	for i := range 3 {
		bo.PutUint16(b[bpsOff+2*i:], 8)
	}
	for y := range h {
		for x := range w {
			c := m.NRGBAAt(x, y)
			b = append(b, c.R, c.G, c.B)
		}
	}
	return b
}

// zeroPNG is a valid all-black PNG of w×h whose data compresses about
// 1000:1, built without compressing the whole image: deflate output for a
// run of zeros that follows other zeros is the same wherever it falls, so
// one compressed megabyte is repeated. colorType and depth are PNG's
// (6 and 16: 16-bit RGBA).
func zeroPNG(t testing.TB, w, h int, depth, colorType byte) []byte {
	t.Helper()
	channels := map[byte]int{0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colorType]
	rowBytes := 1 + (w*channels*int(depth)+7)/8
	total := rowBytes * h
	const k = 1 << 20
	zeros := make([]byte, k)
	dict := zeros[:32<<10]
	compress := func(n int, withDict, final bool) []byte {
		var b bytes.Buffer
		var fw *flate.Writer
		var err error
		if withDict {
			fw, err = flate.NewWriterDict(&b, flate.BestCompression, dict)
		} else {
			fw, err = flate.NewWriter(&b, flate.BestCompression)
		}
		if err != nil {
			t.Fatal(err)
		}
		for n > 0 {
			m := min(n, k)
			fw.Write(zeros[:m])
			n -= m
		}
		if final {
			err = fw.Close()
		} else {
			err = fw.Flush()
		}
		if err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	z := []byte{0x78, 0xda}
	z = append(z, compress(min(total, k), false, total <= k)...)
	if total > k {
		chunk := compress(k, true, false)
		n := (total - k) / k
		for range n {
			z = append(z, chunk...)
		}
		z = append(z, compress(total-k-n*k, true, true)...)
	}
	// Adler-32 of zeros: a stays 1, b adds 1 per byte.
	z = binary.BigEndian.AppendUint32(z, uint32(total%65521)<<16|1)
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ihdr = append(ihdr, depth, colorType, 0, 0, 0)
	b := []byte("\x89PNG\r\n\x1a\n")
	b = append(b, pngChunk("IHDR", ihdr)...)
	b = append(b, pngChunk("IDAT", z)...)
	return append(b, pngChunk("IEND", nil)...)
}
