package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domstorage"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"
)

// State is a profile's browser storage, carried from one render to a later
// one: cookies, and local and session storage by origin. It marshals to
// JSON for durable storage; the browser keeps nothing after the render.
type State struct {
	Cookies        []Cookie                     `json:"cookies,omitempty"`
	LocalStorage   map[string]map[string]string `json:"localStorage,omitempty"`   // origin -> key -> value
	SessionStorage map[string]map[string]string `json:"sessionStorage,omitempty"` // origin -> key -> value
}

// Cookie is one browser cookie.
type Cookie struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	Domain   string  `json:"domain"`
	Path     string  `json:"path,omitempty"`
	Expires  float64 `json:"expires,omitempty"` // Unix seconds; 0 = session cookie
	HTTPOnly bool    `json:"httpOnly,omitempty"`
	Secure   bool    `json:"secure,omitempty"`
	SameSite string  `json:"sameSite,omitempty"` // Strict, Lax, None
}

// storageID names the DOM storage of an origin.
func storageID(origin string, local bool) *domstorage.StorageID {
	return &domstorage.StorageID{StorageKey: domstorage.SerializedStorageKey(origin + "/"), IsLocalStorage: local}
}

// restoreScript fills local and session storage from data
// ({local: {origin: {k: v}}, session: ...}) in each new document of a
// listed origin, before the page's scripts run.
const restoreScript = `((data) => {
  const o = location.origin;
  for (const [kind, store] of [['local', window.localStorage], ['session', window.sessionStorage]]) {
    const items = (data[kind] || {})[o];
    if (!items) continue;
    try { for (const [k, v] of Object.entries(items)) store.setItem(k, v); } catch (e) {}
  }
})`

// loadState puts st into the tab's browser context before navigation:
// cookies directly, storage through a script that runs in the documents of
// the first navigation. It returns that script's identifier ("" if none),
// to remove once the page has loaded. The restored origins are noted so
// that the slot is cleaned of them.
func (p *Pool) loadState(ctx context.Context, inst *instance, s *slot, tb *tab, st *State) (page.ScriptIdentifier, error) {
	if len(st.Cookies) > 0 {
		params := storage.SetCookiesParams{BrowserContextID: s.id}
		for _, c := range st.Cookies {
			cp := &network.CookieParam{
				Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
				Secure: c.Secure, HTTPOnly: c.HTTPOnly, SameSite: network.CookieSameSite(c.SameSite),
			}
			if c.Expires > 0 {
				cp.Expires = cdp.TimeSinceEpoch(c.Expires)
			}
			params.Cookies = append(params.Cookies, cp)
		}
		b := chromedp.FromContext(inst.ctx).Browser
		if _, err := cdp.Call(ctx, b, storage.SetCookies, params); err != nil {
			return "", fmt.Errorf("set cookies: %w", err)
		}
	}
	if len(st.LocalStorage) == 0 && len(st.SessionStorage) == 0 {
		return "", nil
	}
	tb.tr.mu.Lock()
	if len(st.SessionStorage) > 0 {
		tb.tr.sessionStorage = true
	}
	for _, m := range []map[string]map[string]string{st.LocalStorage, st.SessionStorage} {
		for origin := range m {
			tb.tr.origins[origin] = true
		}
	}
	tb.tr.mu.Unlock()
	data, err := json.Marshal(map[string]any{"local": st.LocalStorage, "session": st.SessionStorage})
	if err != nil {
		return "", err
	}
	res, err := cdp.Call(ctx, tb.t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: restoreScript + "(" + string(data) + ");",
	})
	if err != nil {
		return "", fmt.Errorf("restore storage: %w", err)
	}
	return res.Identifier, nil
}

// readState reads the cookies of the tab's browser context and the local
// and session storage of the origins that have a frame in the page.
func (p *Pool) readState(ctx context.Context, inst *instance, s *slot, tb *tab) (*State, error) {
	b := chromedp.FromContext(inst.ctx).Browser
	res, err := cdp.Call(ctx, b, storage.GetCookies, storage.GetCookiesParams{BrowserContextID: s.id})
	if err != nil {
		return nil, fmt.Errorf("get cookies: %w", err)
	}
	st := &State{}
	for _, c := range res.Cookies {
		ck := Cookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
			HTTPOnly: c.HTTPOnly, Secure: c.Secure, SameSite: string(c.SameSite)}
		if !c.Session {
			ck.Expires = c.Expires
		}
		st.Cookies = append(st.Cookies, ck)
	}
	origins := tb.tr.visited()
	slices.Sort(origins)
	for _, local := range []bool{true, false} {
		all := map[string]map[string]string{}
		for _, origin := range origins {
			items, err := cdp.Call(ctx, tb.t, domstorage.GetDOMStorageItems, domstorage.GetDOMStorageItemsParams{StorageID: storageID(origin, local)})
			if err != nil {
				if ctx.Err() != nil {
					return nil, err
				}
				// Chrome reads the storage of origins that have a frame
				// in the page; others (redirect hops) are skipped.
				continue
			}
			for _, it := range items.Entries {
				if len(it) == 2 {
					if all[origin] == nil {
						all[origin] = map[string]string{}
					}
					all[origin][it[0]] = it[1]
				}
			}
		}
		if len(all) == 0 {
			continue
		}
		if local {
			st.LocalStorage = all
		} else {
			st.SessionStorage = all
		}
	}
	return st, nil
}
