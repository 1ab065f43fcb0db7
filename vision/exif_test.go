package vision

import (
	"encoding/binary"
	"testing"
)

func TestTIFFOrientation(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	type byteOrder interface {
		binary.ByteOrder
		binary.AppendByteOrder
	}
	withEntries := func(bo byteOrder, entries ...[3]uint32) []byte { // tag, type, value
		b := exifBlock(bo, 1)[:8]
		b = bo.AppendUint16(b, uint16(len(entries)))
		for _, e := range entries {
			b = bo.AppendUint16(b, uint16(e[0]))
			b = bo.AppendUint16(b, uint16(e[1]))
			b = bo.AppendUint32(b, 1)
			if e[1] == 3 {
				b = bo.AppendUint16(b, uint16(e[2]))
				b = append(b, 0, 0)
			} else {
				b = bo.AppendUint32(b, e[2])
			}
		}
		return bo.AppendUint32(b, 0)
	}
	badOffset := exifBlock(le, 6)
	le.PutUint32(badOffset[4:], 1<<31)
	hugeCount := exifBlock(be, 6)
	be.PutUint16(hugeCount[8:], 0xffff)
	be.PutUint16(hugeCount[10:], 0x0100) // first entry is another tag
	tests := []struct {
		name string
		data []byte
		want int
	}{
		{"empty", nil, 1},
		{"short", []byte("II*\x00\x08"), 1},
		{"bad magic", []byte("XX*\x00\x08\x00\x00\x00"), 1},
		{"little-endian 6", exifBlock(le, 6), 6},
		{"big-endian 8", exifBlock(be, 8), 8},
		{"transpose", exifBlock(le, 5), 5},
		{"zero", exifBlock(le, 0), 1},
		{"nine", exifBlock(be, 9), 1},
		{"IFD offset out of range", badOffset, 1},
		{"count beyond data", hugeCount, 1},
		{"after other tags", withEntries(be, [3]uint32{0x010f, 3, 7}, [3]uint32{tagOrientation, 3, 3}), 3},
		{"LONG type", withEntries(le, [3]uint32{tagOrientation, 4, 7}), 7},
		{"ASCII type", withEntries(le, [3]uint32{tagOrientation, 2, 6}), 1},
		{"absent", withEntries(le, [3]uint32{0x0100, 3, 6}), 1},
	}
	for _, tt := range tests {
		if got := tiffOrientation(tt.data); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestJPEGOrientation(t *testing.T) {
	jpg := encodeJPEG(t, marked(8, 8, 2), 80)
	xmp := func(b []byte) []byte { // an XMP APP1 before the EXIF one
		body := []byte("http://ns.adobe.com/xap/1.0/\x00<x/>")
		seg := binary.BigEndian.AppendUint16([]byte{0xff, 0xe1}, uint16(len(body)+2))
		return append(append(append([]byte{0xff, 0xd8}, seg...), body...), b[2:]...)
	}
	overrun := withAPP1(jpg, exifBlock(binary.LittleEndian, 6))
	binary.BigEndian.PutUint16(overrun[4:], 0xfff0)
	fill := append([]byte{0xff, 0xd8, 0xff}, withAPP1(jpg, exifBlock(binary.LittleEndian, 6))[2:]...)
	tests := []struct {
		name string
		data []byte
		want int
	}{
		{"none", jpg, 1},
		{"exif 6", withAPP1(jpg, exifBlock(binary.LittleEndian, 6)), 6},
		{"after xmp", xmp(withAPP1(jpg, exifBlock(binary.BigEndian, 8))), 8},
		{"fill byte", fill, 6},
		{"length overrun", overrun, 1},
		{"truncated", withAPP1(jpg, exifBlock(binary.LittleEndian, 6))[:10], 1},
		{"soi only", []byte{0xff, 0xd8}, 1},
		{"not a marker", []byte{0xff, 0xd8, 0x00, 0x00, 0x00, 0x00}, 1},
	}
	for _, tt := range tests {
		if got := jpegOrientation(tt.data); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestPNGOrientation(t *testing.T) {
	p := encodePNG(t, marked(8, 8, 2))
	exif := exifBlock(binary.BigEndian, 6)
	afterData := append(append([]byte{}, p[:len(p)-12]...), pngChunk("eXIf", exif)...)
	afterData = append(afterData, p[len(p)-12:]...)
	tests := []struct {
		name string
		data []byte
		want int
	}{
		{"none", p, 1},
		{"eXIf", withPNGChunk(p, "eXIf", exif), 6},
		{"eXIf after IDAT ignored", afterData, 1},
		{"truncated", withPNGChunk(p, "eXIf", exif)[:40], 1},
	}
	for _, tt := range tests {
		if got := pngOrientation(tt.data); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestScanWebP(t *testing.T) {
	img := vp8l(4, 4, 0, 0, 255, 0, 255, func(x, y int) bool { return x == y })
	tests := []struct {
		name     string
		data     []byte
		animated bool
		orient   int
	}{
		{"plain", riffWebP("VP8L", img), false, 1},
		{"animated", riffWebP("VP8X", vp8x(0x02, 4, 4), "ANIM", make([]byte, 6)), true, 1},
		{"exif", riffWebP("VP8X", vp8x(0x08, 4, 4), "VP8L", img, "EXIF", exifBlock(binary.LittleEndian, 6)), false, 6},
		{"exif with jpeg prefix", riffWebP("VP8X", vp8x(0x08, 4, 4), "VP8L", img,
			"EXIF", append([]byte("Exif\x00\x00"), exifBlock(binary.BigEndian, 8)...)), false, 8},
		{"odd chunk padded", riffWebP("VP8X", vp8x(0x08, 4, 4), "ICCP", []byte{1, 2, 3},
			"VP8L", img, "EXIF", exifBlock(binary.LittleEndian, 3)), false, 3},
		{"chunk overrun", riffWebP("VP8X", vp8x(0x08, 4, 4))[:20], false, 1},
	}
	for _, tt := range tests {
		got := scanWebP(tt.data)
		if got.animated != tt.animated || got.orientation != tt.orient {
			t.Errorf("%s: got %+v, want animated %v orientation %d", tt.name, got, tt.animated, tt.orient)
		}
	}
}

func TestGIFFrames(t *testing.T) {
	one := encodeGIF(t, marked(8, 8, 2))
	three := animatedGIF(t, 8, 8, 3)
	tests := []struct {
		name string
		data []byte
		want int
	}{
		{"single", one, 1},
		{"animated stops at two", three, 2},
		{"truncated", one[:len(one)/2], 0},
		{"header only", one[:13], 0},
		{"short", []byte("GIF89a"), 0},
	}
	for _, tt := range tests {
		if got := gifFrames(tt.data); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}
