package vision

import (
	"bytes"
	"encoding/binary"
)

// The parsers below read only the EXIF orientation tag. They are bounds
// checked throughout: metadata is untrusted and malformed metadata means
// orientation 1, never an error or a panic.

const tagOrientation = 0x0112

// jpegOrientation finds the first APP1 "Exif" segment before the scan data.
func jpegOrientation(data []byte) int {
	o := 1
	walkJPEG(data, func(marker byte, seg []byte) bool {
		if marker == 0xe1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
			o = tiffOrientation(seg[6:])
			return true
		}
		return false
	})
	return o
}

// walkJPEG calls visit with each marker segment before the scan data (its
// marker and its payload) until visit returns true. It stops quietly at
// the start of scan, the end of the image or anything malformed.
func walkJPEG(data []byte, visit func(marker byte, seg []byte) bool) {
	p := 2 // after SOI
	for p+4 <= len(data) {
		if data[p] != 0xff {
			return
		}
		marker := data[p+1]
		switch {
		case marker == 0xff: // fill byte
			p++
			continue
		case marker == 0xd8 || marker == 0x01 || (marker >= 0xd0 && marker <= 0xd7):
			p += 2 // no length field
			continue
		case marker == 0xda || marker == 0xd9: // start of scan, end of image
			return
		}
		n := int(binary.BigEndian.Uint16(data[p+2 : p+4]))
		if n < 2 || p+2+n > len(data) {
			return
		}
		if visit(marker, data[p+4:p+2+n]) {
			return
		}
		p += 2 + n
	}
}

// tiffOrientation reads tag 0x0112 from IFD0 of a TIFF structure, which is
// both a TIFF file's header and the body of an EXIF block.
func tiffOrientation(b []byte) int {
	if len(b) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(b[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	default:
		return 1
	}
	off := uint64(bo.Uint32(b[4:8]))
	if off+2 > uint64(len(b)) {
		return 1
	}
	count := uint64(bo.Uint16(b[off:]))
	for i := range count {
		e := off + 2 + 12*i
		if e+12 > uint64(len(b)) {
			return 1
		}
		if bo.Uint16(b[e:]) != tagOrientation {
			continue
		}
		var v uint32
		switch bo.Uint16(b[e+2:]) { // the value fits in the entry's value field
		case 3: // SHORT
			v = uint32(bo.Uint16(b[e+8:]))
		case 4: // LONG, written by a few tools
			v = bo.Uint32(b[e+8:])
		default:
			return 1
		}
		if v < 1 || v > 8 {
			return 1
		}
		return int(v)
	}
	return 1
}

// pngOrientation reads an eXIf chunk, which must precede the image data.
func pngOrientation(data []byte) int {
	p := 8 // after the signature
	for p+8 <= len(data) {
		n := uint64(binary.BigEndian.Uint32(data[p:]))
		typ := string(data[p+4 : p+8])
		if typ == "IDAT" || typ == "IEND" || uint64(p)+12+n > uint64(len(data)) {
			return 1
		}
		if typ == "eXIf" {
			return tiffOrientation(data[p+8 : p+8+int(n)])
		}
		p += 12 + int(n)
	}
	return 1
}
