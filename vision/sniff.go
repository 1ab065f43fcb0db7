package vision

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Sniff returns the media type of data from its magic bytes; file names are
// never consulted. It returns ErrCorrupt for empty data and ErrUnsupported
// for anything other than PNG, JPEG, GIF, WebP, BMP, TIFF and HEIC/HEIF.
// HEIC is recognised although Prepare cannot decode it, so callers can still
// report the type.
func Sniff(data []byte) (mediaType string, err error) {
	switch {
	case len(data) == 0:
		return "", fmt.Errorf("%w: empty data", ErrCorrupt)
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return TypePNG, nil
	case bytes.HasPrefix(data, []byte{0xff, 0xd8, 0xff}):
		return TypeJPEG, nil
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return TypeGIF, nil
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return TypeWebP, nil
	case isBMP(data):
		return TypeBMP, nil
	case bytes.HasPrefix(data, []byte("II*\x00")), bytes.HasPrefix(data, []byte("MM\x00*")):
		return TypeTIFF, nil
	}
	if t := heifType(data); t != "" {
		return t, nil
	}
	n := min(len(data), 8)
	return "", fmt.Errorf("%w: unknown signature % x", ErrUnsupported, data[:n])
}

// isBMP checks the DIB header size as well, since "BM" alone also starts
// plenty of text files.
func isBMP(data []byte) bool {
	if len(data) < 18 || data[0] != 'B' || data[1] != 'M' {
		return false
	}
	switch binary.LittleEndian.Uint32(data[14:18]) {
	case 12, 16, 40, 52, 56, 64, 108, 124:
		return true
	}
	return false
}

// heifType reads the ISO-BMFF ftyp box: HEVC-coded brands are HEIC, other
// HEIF brands plain HEIF. AVIF shares the container but is not HEIF here.
func heifType(data []byte) string {
	if len(data) < 16 || string(data[4:8]) != "ftyp" {
		return ""
	}
	size := int(binary.BigEndian.Uint32(data[:4]))
	if size < 16 || size > len(data) {
		size = len(data)
	}
	brands := [][]byte{data[8:12]} // major brand, then compatible brands after the minor version
	for i := 16; i+4 <= size; i += 4 {
		brands = append(brands, data[i:i+4])
	}
	heif := false
	for _, b := range brands {
		switch string(b) {
		case "heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs":
			return TypeHEIC
		case "avif", "avis":
			return ""
		case "mif1", "msf1":
			heif = true
		}
	}
	if heif {
		return TypeHEIF
	}
	return ""
}

// gifFrames counts image descriptors by walking the block structure, so an
// animation is detected without decoding every frame. It stops at the first
// malformed block; the decoder reports the damage.
func gifFrames(data []byte) int {
	const header = 13
	if len(data) < header {
		return 0
	}
	p := header
	if flags := data[10]; flags&0x80 != 0 {
		p += 3 << ((flags & 7) + 1)
	}
	skipSubBlocks := func() bool {
		for p < len(data) {
			n := int(data[p])
			p += 1 + n
			if n == 0 {
				return true
			}
		}
		return false
	}
	frames := 0
	for p < len(data) {
		switch data[p] {
		case 0x21: // extension: label, then sub-blocks
			p += 2
			if !skipSubBlocks() {
				return frames
			}
		case 0x2c: // image descriptor, optional local table, LZW code size, sub-blocks
			if p+10 > len(data) {
				return frames
			}
			flags := data[p+9]
			p += 10
			if flags&0x80 != 0 {
				p += 3 << ((flags & 7) + 1)
			}
			p++ // LZW minimum code size
			if !skipSubBlocks() {
				return frames
			}
			frames++
			if frames > 1 {
				return frames
			}
		default: // 0x3b trailer, or garbage
			return frames
		}
	}
	return frames
}

type webpInfo struct {
	animated    bool
	orientation int
}

// scanWebP walks the RIFF chunks for the VP8X animation flag and an EXIF
// chunk.
func scanWebP(data []byte) webpInfo {
	info := webpInfo{orientation: 1}
	if len(data) < 12 {
		return info
	}
	end := len(data)
	if n := int64(binary.LittleEndian.Uint32(data[4:8])) + 8; n < int64(end) {
		end = int(n)
	}
	for p := 12; p+8 <= end; {
		id := string(data[p : p+4])
		n := int(binary.LittleEndian.Uint32(data[p+4 : p+8]))
		body := data[p+8:]
		if n < 0 || n > len(body) {
			return info
		}
		body = body[:n]
		switch id {
		case "VP8X":
			if len(body) > 0 && body[0]&0x02 != 0 {
				info.animated = true
			}
		case "EXIF":
			// Some writers keep the JPEG APP1 prefix.
			body = bytes.TrimPrefix(body, []byte("Exif\x00\x00"))
			info.orientation = tiffOrientation(body)
		}
		p += 8 + n + n&1 // chunks are padded to even length
	}
	return info
}
