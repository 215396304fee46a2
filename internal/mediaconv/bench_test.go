package mediaconv

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/mediaconv/mediatest"
)

// BenchmarkConvert converts a 30 s 640x360 clip (H.264/AAC MP4, and
// VP8/Vorbis WebM) served on loopback, reporting the CPU time of ffmpeg and
// ffprobe per conversion (children's rusage, steadier than wall time on a
// shared machine):
//
//	go test -run - -bench Convert -benchtime 3x ./internal/mediaconv/
func BenchmarkConvert(b *testing.B) {
	ffmpeg := mediatest.FFmpeg(b)
	dir := b.TempDir()
	src := []string{"-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=640x360:rate=30:duration=30",
		"-f", "lavfi", "-i", "sine=frequency=440:duration=30"}
	for name, codecs := range map[string][]string{
		"clip.mp4":  {"-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-c:a", "aac"},
		"clip.webm": {"-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "1M", "-c:a", "libvorbis"},
	} {
		args := append(append(append([]string{}, src...), codecs...), "-shortest", filepath.Join(dir, name))
		if out, err := exec.Command(ffmpeg, args...).CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
	srv := mediatest.Serve(b, dir)
	c, err := New(Options{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	o := &opener{}
	for _, bc := range []struct {
		name, file   string
		audio, video bool
	}{
		{"mp4-to-mp3", "clip.mp4", true, false},
		{"mp4-to-mp4-copy", "clip.mp4", false, true},
		{"webm-to-mp4-encode", "clip.webm", false, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var before, after syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
			for b.Loop() {
				out := b.TempDir()
				res, err := c.Convert(b.Context(), Request{URL: srv.URL + "/media/" + bc.file, Open: o.open, Audio: bc.audio, Video: bc.video, Dir: out})
				if err != nil {
					b.Fatal(err)
				}
				if res.Audio == nil && res.Video == nil {
					b.Fatal("no output")
				}
				os.RemoveAll(out)
			}
			_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
			cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) / time.Duration(b.N)
			b.ReportMetric(float64(cpu.Milliseconds()), "child-cpu-ms/op")
		})
	}
}
