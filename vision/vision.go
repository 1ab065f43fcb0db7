// Package vision turns image bytes into an image a vision model accepts.
//
// Prepare sniffs the real format from the bytes (never from a file name),
// refuses oversized images from their header before decoding (by pixel
// count and by the memory their bit depth and colour model need), applies the
// EXIF orientation, downsamples so the longest side fits, and transcodes
// formats the model does not accept. It works on an in-memory copy only: the
// caller's bytes and files are never modified.
package vision

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
	"golang.org/x/image/webp"
)

var (
	// ErrTooManyPixels means width*height exceeds Options.MaxPixels.
	ErrTooManyPixels = errors.New("too many pixels")
	// ErrUnsupported means the bytes are not an image format this package
	// can decode.
	ErrUnsupported = errors.New("unsupported format")
	// ErrCorrupt means the bytes claim a known format but do not decode.
	ErrCorrupt = errors.New("corrupt image")
	// ErrTooLarge means the input exceeds Options.MaxBytes.
	ErrTooLarge = errors.New("image data too large")
	// ErrTooMuchMemory means decoding would take more than
	// Options.MaxDecodeBytes, judged from the header before decoding.
	ErrTooMuchMemory = errors.New("image needs too much memory")
)

// Defaults used for zero (or negative) Options fields.
const (
	DefaultMaxPixels = 40_000_000
	DefaultMaxSide   = 2048
	DefaultMaxBytes  = 20 << 20
	DefaultQuality   = 85
	// DefaultMaxDecodeBytes matches the heap the reme binary aims to stay
	// under; 8-bit images up to the pixel limit fit, 16-bit ones only
	// about half as large.
	DefaultMaxDecodeBytes = 256 << 20
)

// Media types produced by Sniff.
const (
	TypePNG  = "image/png"
	TypeJPEG = "image/jpeg"
	TypeGIF  = "image/gif"
	TypeWebP = "image/webp"
	TypeBMP  = "image/bmp"
	TypeTIFF = "image/tiff"
	TypeHEIC = "image/heic"
	TypeHEIF = "image/heif"
)

// Options bound the work Prepare does. Zero fields take the defaults.
type Options struct {
	MaxPixels int64 // default 40_000_000
	MaxSide   int   // default 2048: longest side after preparation
	MaxBytes  int64 // input size limit, default 20 MiB
	Quality   int   // JPEG quality when re-encoding, default 85
	// MaxDecodeBytes bounds the memory of decoding and preparing the
	// image, estimated from the header's size, bit depth and colour model;
	// default 256 MiB.
	MaxDecodeBytes int64
}

func (o Options) withDefaults() Options {
	if o.MaxPixels <= 0 {
		o.MaxPixels = DefaultMaxPixels
	}
	if o.MaxSide <= 0 {
		o.MaxSide = DefaultMaxSide
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Quality <= 0 {
		o.Quality = DefaultQuality
	}
	if o.MaxDecodeBytes <= 0 {
		o.MaxDecodeBytes = DefaultMaxDecodeBytes
	}
	o.Quality = min(o.Quality, 100)
	return o
}

// Image is a model-ready image.
type Image struct {
	Data                      []byte // bytes to send to the model; the input slice itself when Changed is false
	MediaType                 string // of Data: image/png, image/jpeg, image/webp or image/gif
	SourceType                string // sniffed from the original bytes, e.g. image/tiff
	Width, Height             int    // of Data
	SourceWidth, SourceHeight int    // as stored, before orientation
	Orientation               int    // EXIF orientation found (1 if none)
	Changed                   bool   // Data differs from the input bytes
}

// DataURL returns Data as a data: URL for inline model requests.
func (img *Image) DataURL() string {
	prefix := "data:" + img.MediaType + ";base64,"
	b := make([]byte, len(prefix)+base64.StdEncoding.EncodedLen(len(img.Data)))
	copy(b, prefix)
	base64.StdEncoding.Encode(b[len(prefix):], img.Data)
	return string(b)
}

// ExtensionFor returns the conventional file extension for a media type,
// ".bin" for anything unknown.
func ExtensionFor(mediaType string) string {
	switch mediaType {
	case TypePNG:
		return ".png"
	case TypeJPEG:
		return ".jpg"
	case TypeWebP:
		return ".webp"
	case TypeGIF:
		return ".gif"
	case TypeBMP:
		return ".bmp"
	case TypeTIFF:
		return ".tiff"
	case TypeHEIC:
		return ".heic"
	case TypeHEIF:
		return ".heif"
	}
	return ".bin"
}

type codec struct {
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
}

// codecs is keyed by the sniffed type so the decoder always matches Sniff;
// image.Decode would sniff again with its own, looser rules.
var codecs = map[string]codec{
	TypePNG:  {png.DecodeConfig, png.Decode},
	TypeJPEG: {jpeg.DecodeConfig, jpeg.Decode},
	TypeGIF:  {gif.DecodeConfig, gif.Decode}, // gif.Decode stops after the first frame
	TypeWebP: {webp.DecodeConfig, webp.Decode},
	TypeBMP:  {bmp.DecodeConfig, bmp.Decode},
	TypeTIFF: {tiff.DecodeConfig, tiff.Decode},
}

// modelTypes are the formats vision models take as they are.
var modelTypes = map[string]bool{TypePNG: true, TypeJPEG: true, TypeWebP: true, TypeGIF: true}

// Prepare checks data and returns the image to send to a model. The original
// bytes are returned unchanged when they are already acceptable; otherwise
// the image is decoded, oriented, downsampled and re-encoded in memory.
func Prepare(data []byte, opt Options) (*Image, error) {
	opt = opt.withDefaults()
	if int64(len(data)) > opt.MaxBytes {
		return nil, fmt.Errorf("%d bytes over the %d byte limit: %w", len(data), opt.MaxBytes, ErrTooLarge)
	}
	typ, err := Sniff(data)
	if err != nil {
		return nil, err
	}
	c, ok := codecs[typ]
	if !ok {
		// Sniff recognises HEIC/HEIF so callers can report the type, but
		// decoding it would need cgo (libheif).
		return nil, fmt.Errorf("%w %s: no pure-Go HEIC decoder", ErrUnsupported, typ)
	}

	cfg, err := safely(func() (image.Config, error) { return c.config(bytes.NewReader(data)) })
	if err != nil {
		return nil, decodeError(typ, "read header of", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, fmt.Errorf("read header of %s: %w: zero size %dx%d", typ, ErrCorrupt, cfg.Width, cfg.Height)
	}
	if int64(cfg.Width)*int64(cfg.Height) > opt.MaxPixels {
		return nil, fmt.Errorf("%s is %dx%d, over the %d pixel limit: %w",
			typ, cfg.Width, cfg.Height, opt.MaxPixels, ErrTooManyPixels)
	}

	orient, animated := 1, false
	switch typ {
	case TypeJPEG:
		orient = jpegOrientation(data)
	case TypeTIFF:
		orient = tiffOrientation(data)
	case TypePNG:
		orient = pngOrientation(data)
	case TypeWebP:
		info := scanWebP(data)
		if info.animated {
			// x/image/webp cannot decode animation frames.
			return nil, fmt.Errorf("%w: animated %s", ErrUnsupported, typ)
		}
		orient = info.orientation
	case TypeGIF:
		animated = gifFrames(data) > 1
	}

	passThrough := modelTypes[typ] && orient == 1 && !animated && max(cfg.Width, cfg.Height) <= opt.MaxSide
	if err := checkMemory(typ, cfg, data, !passThrough, opt.MaxDecodeBytes); err != nil {
		return nil, err
	}

	// Decode even when the bytes will pass through unchanged: a truncated or
	// corrupt file must fail here with a clear error, not at the model.
	m, err := safely(func() (image.Image, error) { return c.decode(bytes.NewReader(data)) })
	if err != nil {
		return nil, decodeError(typ, "decode", err)
	}

	out := &Image{
		SourceType:   typ,
		SourceWidth:  cfg.Width,
		SourceHeight: cfg.Height,
		Orientation:  orient,
	}
	if passThrough {
		out.Data, out.MediaType = data, typ
		out.Width, out.Height = cfg.Width, cfg.Height
		return out, nil
	}

	if typ == TypeGIF {
		// A frame may cover only part of the logical screen.
		m = onCanvas(m, image.Rect(0, 0, cfg.Width, cfg.Height))
	}
	res := m // a plain transcode keeps the decoder's layout, e.g. paletted
	if w, h := fit(cfg.Width, cfg.Height, opt.MaxSide); w != cfg.Width || h != cfg.Height || orient != 1 {
		// Orientation is applied after the resize, to the smaller image; the
		// result is the same as rotating first, with less copying.
		res = toRaster(m).resize(w, h).orient(orient).image()
	}

	var buf bytes.Buffer
	out.MediaType, err = encode(&buf, res, typ == TypeJPEG, opt.Quality)
	if err != nil {
		return nil, fmt.Errorf("encode %s as %s: %w", typ, out.MediaType, err)
	}
	b := res.Bounds()
	out.Data, out.Width, out.Height, out.Changed = buf.Bytes(), b.Dx(), b.Dy(), true
	return out, nil
}

// fit returns the size that brings the longest side down to maxSide,
// keeping the aspect ratio. Orientation only swaps the sides, so it does not
// change the result.
func fit(w, h, maxSide int) (int, int) {
	long := max(w, h)
	if long <= maxSide {
		return w, h
	}
	scale := float64(maxSide) / float64(long)
	tw := min(maxSide, max(1, int(float64(w)*scale+0.5)))
	th := min(maxSide, max(1, int(float64(h)*scale+0.5)))
	return tw, th
}

// Above this size a PNG of an opaque image is almost certainly a photo that
// deflate cannot shrink, and JPEG is several times smaller at no visible cost
// to a model.
const (
	photoPNGMinBytes      = 1 << 20
	photoPNGBytesPerPixel = 1
)

// encode writes m as JPEG when the source was JPEG, as PNG when m has
// transparency, and otherwise as PNG unless that PNG is photo-sized.
func encode(buf *bytes.Buffer, m image.Image, fromJPEG bool, quality int) (string, error) {
	jpg := func() (string, error) {
		buf.Reset()
		return TypeJPEG, jpeg.Encode(buf, m, &jpeg.Options{Quality: quality})
	}
	if fromJPEG {
		return jpg()
	}
	if err := png.Encode(buf, m); err != nil {
		return TypePNG, err
	}
	b := m.Bounds()
	if buf.Len() > photoPNGMinBytes && buf.Len() > photoPNGBytesPerPixel*b.Dx()*b.Dy() && opaque(m) {
		return jpg()
	}
	return TypePNG, nil
}

func opaque(m image.Image) bool {
	if o, ok := m.(interface{ Opaque() bool }); ok {
		return o.Opaque()
	}
	return false
}

// safely runs a third-party decoder on untrusted bytes; a decoder bug that
// panics must fail only this image, not the process.
func safely[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("decoder panic: %v", p)
		}
	}()
	return f()
}

// decodeError classifies a decoder error: formats' valid-but-unsupported
// variants become ErrUnsupported, everything else ErrCorrupt.
func decodeError(typ, action string, err error) error {
	var (
		pngU  png.UnsupportedError
		jpegU jpeg.UnsupportedError
		tiffU tiff.UnsupportedError
	)
	if errors.As(err, &pngU) || errors.As(err, &jpegU) || errors.As(err, &tiffU) || errors.Is(err, bmp.ErrUnsupported) {
		return fmt.Errorf("%s %s: %w: %w", action, typ, ErrUnsupported, err)
	}
	return fmt.Errorf("%s %s: %w: %w", action, typ, ErrCorrupt, err)
}
