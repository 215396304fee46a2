package interact

import (
	"testing"
	"time"

	"github.com/firegate/firegate/internal/testenv"
)

// BenchmarkSnapshot measures one recording snapshot of a small page (its
// history entry and a JPEG of the viewport) and reports the JPEG's size.
func BenchmarkSnapshot(b *testing.B) {
	srv := site(b)
	m := New(Config{Store: testStore(b), Browser: testPool(b), Log: testenv.Logger(b)})
	ctx := b.Context()
	rec, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Hour, ActivityTTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Delete(ctx, team, rec.ID)
	sess := m.live[rec.ID].sess
	if _, err := sess.Goto(ctx, srv.URL+"/"); err != nil {
		b.Fatal(err)
	}
	var size int
	for b.Loop() {
		snap, err := sess.Snapshot(ctx)
		if err != nil {
			b.Fatal(err)
		}
		size = len(snap.JPEG)
	}
	b.ReportMetric(float64(size), "jpeg-bytes")
}
