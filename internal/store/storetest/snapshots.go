package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
)

func testScrapeSnapshots(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, b := mustTeam(t, s, "a"), mustTeam(t, s, "b")
	const u = "https://example.com/p"
	_, err := s.PreviousScrape(ctx, a.ID, u, "")
	checkErr(t, "PreviousScrape before save", err, store.ErrNotFound)

	at := time.Date(2026, 3, 4, 5, 6, 7, 891234567, time.FixedZone("x", 3600))
	first := store.ScrapeSnapshot{TeamID: a.ID, URL: u, Markdown: "# One\n\nü \x01", ScrapedAt: at}
	if err := s.SaveScrape(ctx, first); err != nil {
		t.Fatalf("SaveScrape: %v", err)
	}
	got, err := s.PreviousScrape(ctx, a.ID, u, "")
	if err != nil {
		t.Fatalf("PreviousScrape: %v", err)
	}
	if got.Markdown != first.Markdown || got.JSON != nil || !got.ScrapedAt.Equal(at.Truncate(time.Microsecond)) || got.ScrapedAt.Location() != time.UTC {
		t.Errorf("PreviousScrape = %+v, want %+v (time in UTC to the microsecond)", got, first)
	}

	// Saving again replaces; tags and teams keep their own histories.
	second := store.ScrapeSnapshot{TeamID: a.ID, URL: u, Markdown: "# Two", JSON: []byte(`{"k":1}`), ScrapedAt: at.Add(time.Hour)}
	if err := s.SaveScrape(ctx, second); err != nil {
		t.Fatalf("SaveScrape again: %v", err)
	}
	tagged := store.ScrapeSnapshot{TeamID: a.ID, URL: u, Tag: "weekly", Markdown: "# Tagged", ScrapedAt: at}
	if err := s.SaveScrape(ctx, tagged); err != nil {
		t.Fatalf("SaveScrape tagged: %v", err)
	}
	if got, _ := s.PreviousScrape(ctx, a.ID, u, ""); got.Markdown != "# Two" || !bytes.Equal(got.JSON, second.JSON) {
		t.Errorf("after replace: %+v", got)
	}
	if got, _ := s.PreviousScrape(ctx, a.ID, u, "weekly"); got.Markdown != "# Tagged" {
		t.Errorf("tagged: %+v", got)
	}
	_, err = s.PreviousScrape(ctx, b.ID, u, "")
	checkErr(t, "PreviousScrape of another team", err, store.ErrNotFound)
	_, err = s.PreviousScrape(ctx, a.ID, u+"/", "")
	checkErr(t, "PreviousScrape of another URL", err, store.ErrNotFound)

	err = s.SaveScrape(ctx, store.ScrapeSnapshot{TeamID: uuid.NewString(), URL: u, Markdown: "x", ScrapedAt: at})
	checkErr(t, "SaveScrape for an unknown team", err, store.ErrNotFound)
}
