package vision

import (
	"bufio"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var (
	bigPhotoOnce sync.Once
	bigPhoto     []byte
)

// bigPhotoJPEG is a 4000×3000 photo-like JPEG at quality 90, the size of a
// phone camera picture.
func bigPhotoJPEG(tb testing.TB) []byte {
	bigPhotoOnce.Do(func() { bigPhoto = encodeJPEG(tb, photo(4000, 3000), 90) })
	return bigPhoto
}

// Target: ≤ 400 ms and ≤ 120 MB peak memory on 2 cores.
func BenchmarkPrepareJPEG4000x3000(b *testing.B) {
	data := bigPhotoJPEG(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		img, err := Prepare(data, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if img.Width != 2048 || img.Height != 1536 {
			b.Fatalf("got %dx%d", img.Width, img.Height)
		}
	}
}

// A portrait phone photo: stored landscape with EXIF orientation 6.
func BenchmarkPrepareJPEG4000x3000Rotated(b *testing.B) {
	data := withAPP1(bigPhotoJPEG(b), exifBlock(binary.LittleEndian, 6))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		img, err := Prepare(data, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if img.Width != 1536 || img.Height != 2048 {
			b.Fatalf("got %dx%d", img.Width, img.Height)
		}
	}
}

// TestPeakRSS prepares the benchmark image once in a fresh process and
// reports its peak resident set (VmHWM). It is opt-in because it spends a
// few seconds building the input:
//
//	VISION_PEAK_RSS=1 go test -run TestPeakRSS -v ./vision
func TestPeakRSS(t *testing.T) {
	if in := os.Getenv("VISION_RSS_INPUT"); in != "" {
		peakRSSChild(t, in)
		return
	}
	if os.Getenv("VISION_PEAK_RSS") == "" {
		t.Skip("set VISION_PEAK_RSS=1 to measure")
	}
	path := filepath.Join(t.TempDir(), "photo.jpg")
	if err := os.WriteFile(path, bigPhotoJPEG(t), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPeakRSS$", "-test.v")
	cmd.Env = append(os.Environ(), "VISION_RSS_INPUT="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var before, after int
	for line := range strings.Lines(string(out)) {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "vmhwm-kb" {
			before, _ = strconv.Atoi(f[1])
			after, _ = strconv.Atoi(f[2])
		}
	}
	if after == 0 {
		t.Fatalf("no measurement in child output:\n%s", out)
	}
	t.Logf("input %d bytes; peak RSS %.1f MB after reading the file, %.1f MB after Prepare",
		len(bigPhotoJPEG(t)), float64(before)/1024, float64(after)/1024)
	if after > 120*1024 {
		t.Errorf("peak RSS %d kB over the 120 MB target", after)
	}
}

func peakRSSChild(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before := vmHWM(t)
	img, err := Prepare(data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prepared %dx%d %s, %d bytes", img.Width, img.Height, img.MediaType, len(img.Data))
	// Printed, not logged, so the parent can parse it.
	os.Stdout.WriteString("vmhwm-kb " + strconv.Itoa(before) + " " + strconv.Itoa(vmHWM(t)) + "\n")
}

func vmHWM(t *testing.T) int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status:", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	t.Skip("no VmHWM")
	return 0
}
