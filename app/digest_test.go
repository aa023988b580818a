package app

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/internal/vartmp"
)

// The digest dispatch publishes at start, before anyone could subscribe, is kept by the
// core: the route answers it with its counts, a dismissal hides it (a reload reads
// nothing), a newer digest shows again and a stale dismissal does not hide it.
func TestDigestCardRoutes(t *testing.T) {
	base := vartmp.Dir(t, "airlock-digest-")
	first, _ := runCoreAt(t, base)
	finished := time.Now().Add(time.Hour) // after the last heartbeat the next start reads
	if err := first.DB.Create(&dispatch.Run{TaskName: "nightly", ScheduledAt: time.Now(), Trigger: dispatch.TriggerManual,
		Status: dispatch.StatusFailed, Reason: "exit status 3", FinishedAt: &finished}).Error; err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	c, _ := runCoreAt(t, base)
	cl := localapi.NewClient(c.Paths.Socket)
	ctx := context.Background()
	// The API answers as soon as the core listens; dispatch publishes its digest as it
	// starts, a moment later.
	var card api.DigestCard
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if card, err = localapi.Call(ctx, cl, api.GetDigest, api.None{}); err != nil {
			t.Fatal(err)
		}
		if card.ID != 0 || time.Now().After(deadline) {
			break
		}
	}
	if card.ID == 0 || card.FailedRuns != 1 || card.Text == "" || card.At.IsZero() {
		t.Fatalf("the start-up digest = %+v; want one failed run", card)
	}

	// An id from the future is refused with the way out.
	var ae *api.Error
	if _, err := localapi.Call(ctx, cl, api.DismissDigest, api.DigestDismissIn{ID: card.ID + 5}); !errors.As(err, &ae) || ae.Status != http.StatusNotFound || ae.Hint == "" {
		t.Fatalf("dismissing an unknown digest: %v, want 404 with a hint", err)
	}
	after, err := localapi.Call(ctx, cl, api.DismissDigest, api.DigestDismissIn{ID: card.ID})
	if err != nil || after.ID != 0 {
		t.Fatalf("dismiss = %+v, %v; want nothing left", after, err)
	}
	if again := c.Digest(WindowCaller()); again.ID != 0 {
		t.Fatalf("a dismissed digest came back: %+v", again)
	}

	// The next digest (as at wake) shows; dismissing the old card does not hide it.
	digestTap{c}.Publish(api.TopicDispatchDigest, api.DispatchDigest{Since: time.Now(), Text: "1 runs waiting for you", HeldRuns: 1})
	woke := c.Digest(WindowCaller())
	if woke.ID != card.ID+1 || woke.HeldRuns != 1 {
		t.Fatalf("the wake digest = %+v", woke)
	}
	if still, err := c.DismissDigest(WindowCaller(), api.DigestDismissIn{ID: card.ID}); err != nil || still.ID != woke.ID {
		t.Fatalf("a stale dismissal: %+v, %v; want the newer card still shown", still, err)
	}
}
