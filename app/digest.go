package app

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/airlock-app/airlock/api"
)

// digests keeps the latest dispatch digest for the window's card and the desktop
// notification. Dispatch publishes the start-up digest while the core opens, before
// the window or the notifier can subscribe, so the core keeps it: whoever comes later
// reads it here. A dismissal is remembered for the core's life, so reloading the
// window does not bring the card back; the next digest (at wake) shows again.
type digests struct {
	mu        sync.Mutex
	latest    api.DigestCard
	dismissed uint64 // the highest ID dismissed
}

// digestTap is the dispatcher's publisher: it keeps each digest, then publishes every
// event on the bus. Keeping it before publishing means a subscriber woken by the event
// reads the new card.
type digestTap struct{ c *Core }

// Publish records a dispatch.digest, then puts the event on the bus.
func (t digestTap) Publish(topic string, payload any) {
	if dg, ok := payload.(api.DispatchDigest); ok && topic == api.TopicDispatchDigest {
		t.c.digests.mu.Lock()
		t.c.digests.latest = api.DigestCard{ID: t.c.digests.latest.ID + 1, At: time.Now().UTC(), DispatchDigest: dg}
		t.c.digests.mu.Unlock()
	}
	t.c.Bus.Publish(topic, payload)
}

// Digest returns the latest digest, or a card with ID 0 when there is none or the
// person dismissed it.
func (c *Core) Digest(Caller) api.DigestCard {
	c.digests.mu.Lock()
	defer c.digests.mu.Unlock()
	if c.digests.latest.ID == 0 || c.digests.latest.ID <= c.digests.dismissed {
		return api.DigestCard{}
	}
	return c.digests.latest
}

// DismissDigest hides the digest in.ID and every older one, and returns what shows now:
// nothing, unless a newer digest arrived after the card the person dismissed.
func (c *Core) DismissDigest(cl Caller, in api.DigestDismissIn) (api.DigestCard, error) {
	c.digests.mu.Lock()
	if in.ID > c.digests.latest.ID {
		latest := c.digests.latest.ID
		c.digests.mu.Unlock()
		return api.DigestCard{}, api.Errorf(http.StatusNotFound, api.CodeNotFound,
			fmt.Sprintf("there is no digest %d (the latest is %d)", in.ID, latest),
			"read the current digest ("+api.GetDigest.Pattern()+") and dismiss its id")
	}
	if in.ID > c.digests.dismissed {
		c.digests.dismissed = in.ID
	}
	c.digests.mu.Unlock()
	return c.Digest(cl), nil
}

// digestRoutes serve the digest card.
func (c *Core) digestRoutes() {
	handle(c, api.GetDigest, func(r *http.Request, _ api.None) (api.DigestCard, error) {
		return c.Digest(APICaller(r, api.Proof{})), nil
	})
	handle(c, api.DismissDigest, func(r *http.Request, in api.DigestDismissIn) (api.DigestCard, error) {
		return c.DismissDigest(APICaller(r, api.Proof{}), in)
	})
}
