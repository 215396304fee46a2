package browser

import (
	"testing"

	"github.com/chromedp/cdproto/domstorage"
)

// A tab is kept for the next render unless its page wrote session storage;
// storage emptied (by the page, or by the cleaning after the last render,
// whose event may come late) leaves nothing and does not count.
func TestTrackerSessionStorage(t *testing.T) {
	t.Parallel()
	session := &domstorage.StorageID{StorageKey: "http://a.test/", IsLocalStorage: false}
	local := &domstorage.StorageID{StorageKey: "http://a.test/", IsLocalStorage: true}
	for _, c := range []struct {
		name string
		ev   any
		keep bool
	}{
		{"session item added", &domstorage.EventDomStorageItemAdded{StorageID: session}, false},
		{"session item updated", &domstorage.EventDomStorageItemUpdated{StorageID: session}, false},
		{"session item removed", &domstorage.EventDomStorageItemRemoved{StorageID: session}, false},
		{"session storage cleared", &domstorage.EventDomStorageItemsCleared{StorageID: session}, true},
		{"local item added", &domstorage.EventDomStorageItemAdded{StorageID: local}, true},
		{"local storage cleared", &domstorage.EventDomStorageItemsCleared{StorageID: local}, true},
	} {
		tr := newTracker()
		tr.onEvent(c.ev)
		if got := tr.reusable(); got != c.keep {
			t.Errorf("%s: reusable = %v, want %v", c.name, got, c.keep)
		}
	}
}
