package desktop

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"testing"

	"github.com/airlock-app/airlock/permission"
)

// appIcon is the app icon main.go embeds and hands the tray.
func appIcon(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile("../../build/appicon.png")
	if err != nil {
		tb.Fatalf("read the app icon: %v", err)
	}
	return b
}

func trayIconsFor(tb testing.TB) *trayIcons {
	tb.Helper()
	ti, err := newTrayIcons(appIcon(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return ti
}

// decodeIcon decodes a rendered icon as a panel would get it.
func decodeIcon(t *testing.T, b []byte) *image.NRGBA {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the tray icon is not a PNG: %v", err)
	}
	if img.Bounds() != image.Rect(0, 0, trayIconSize, trayIconSize) {
		t.Fatalf("icon bounds = %v; want %d×%d", img.Bounds(), trayIconSize, trayIconSize)
	}
	out := image.NewNRGBA(img.Bounds())
	draw.Draw(out, out.Rect, img, image.Point{}, draw.Src)
	return out
}

// near reports whether c is within a few steps of want in every channel.
func near(c, want color.NRGBA) bool {
	d := func(a, b uint8) bool { return int(a)-int(b) <= 6 && int(b)-int(a) <= 6 }
	return d(c.R, want.R) && d(c.G, want.G) && d(c.B, want.B) && d(c.A, want.A)
}

var (
	amberPx = color.NRGBA{0xbd, 0x74, 0x00, 0xff}
	redPx   = color.NRGBA{0xd9, 0x3a, 0x2f, 0xff}
	whitePx = color.NRGBA{0xff, 0xff, 0xff, 0xff}
)

// inBadge reports whether the pixel (x, y) lies wholly inside the badge disc, inset by m.
func inBadge(x, y, m int) bool {
	r := float64(badgeRadius - m)
	for _, c := range [][2]float64{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
		dx, dy := float64(x)+c[0]-badgeCX, float64(y)+c[1]-badgeCY
		if dx*dx+dy*dy > r*r {
			return false
		}
	}
	return true
}

// badgeCensus counts, over the whole icon, the pixels in the badge's colours.
type badgeCensus struct {
	amber, red, white    int // anywhere
	whiteOutsideBadge    int // pure white not inside the disc (inset by 2 px)
	foreignInsideBadge   int // inside the disc, neither the badge colour nor white
	whiteMinX, whiteMaxX int
	whiteMinY, whiteMaxY int
}

func census(img *image.NRGBA, badge color.NRGBA) badgeCensus {
	c := badgeCensus{whiteMinX: trayIconSize, whiteMinY: trayIconSize, whiteMaxX: -1, whiteMaxY: -1}
	for y := 0; y < trayIconSize; y++ {
		for x := 0; x < trayIconSize; x++ {
			p := img.NRGBAAt(x, y)
			switch {
			case near(p, amberPx):
				c.amber++
			case near(p, redPx):
				c.red++
			case p == whitePx:
				c.white++
				c.whiteMinX, c.whiteMaxX = min(c.whiteMinX, x), max(c.whiteMaxX, x)
				c.whiteMinY, c.whiteMaxY = min(c.whiteMinY, y), max(c.whiteMaxY, y)
				if !inBadge(x, y, 2) {
					c.whiteOutsideBadge++
				}
			}
			if inBadge(x, y, 0) && !near(p, badge) && p != whitePx {
				c.foreignInsideBadge++
			}
		}
	}
	return c
}

func TestTrayIconBadge(t *testing.T) {
	ti := trayIconsFor(t)
	plain, err := ti.icon(0, badgeNone)
	if err != nil {
		t.Fatal(err)
	}
	plainImg := decodeIcon(t, plain)
	tests := []struct {
		name  string
		n     int
		tone  badgeTone
		badge color.NRGBA // zero: no badge
	}{
		{"nothing pending", 0, badgeNone, color.NRGBA{}},
		{"nothing pending, tone ignored", 0, badgeRed, color.NRGBA{}},
		{"one P1", 1, badgeAmber, amberPx},
		{"seven P1", 7, badgeAmber, amberPx},
		{"twelve P1 shows 9+", 12, badgeAmber, amberPx},
		{"one P2", 1, badgeRed, redPx},
		{"twelve with a P2 shows 9+", 12, badgeRed, redPx},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ti.icon(tt.n, tt.tone)
			if err != nil {
				t.Fatal(err)
			}
			img := decodeIcon(t, b)
			c := census(img, tt.badge)
			if tt.badge == (color.NRGBA{}) {
				if c.amber+c.red+c.white != 0 {
					t.Fatalf("plain icon has badge pixels: %+v", c)
				}
				if !bytes.Equal(img.Pix, plainImg.Pix) {
					t.Fatal("0 pending is not the plain icon")
				}
				return
			}
			wantTone, otherTone := c.amber, c.red
			if tt.badge == redPx {
				wantTone, otherTone = c.red, c.amber
			}
			// A disc of radius 18 is ~1000 px; the digits take at most ~250 of them.
			if wantTone < 600 || otherTone != 0 {
				t.Errorf("badge colour pixels = %d (other tone %d); want a %v disc", wantTone, otherTone, tt.badge)
			}
			if c.foreignInsideBadge != 0 {
				t.Errorf("%d pixels inside the badge are neither its colour nor white", c.foreignInsideBadge)
			}
			if c.white < 40 || c.whiteOutsideBadge != 0 {
				t.Errorf("white digit pixels = %d, %d of them outside the badge; want the count drawn inside it", c.white, c.whiteOutsideBadge)
			}
			// The label sits in the middle of the badge.
			mx, my := (c.whiteMinX+c.whiteMaxX+1)/2, (c.whiteMinY+c.whiteMaxY+1)/2
			if mx < badgeCX-2 || mx > badgeCX+2 || my < badgeCY-2 || my > badgeCY+2 {
				t.Errorf("digits centred at (%d,%d); want the badge centre (%d,%d)", mx, my, badgeCX, badgeCY)
			}
			// The badge stays in its corner: the rest of the icon is the plain icon.
			for y := 0; y < trayIconSize; y++ {
				for x := 0; x < trayIconSize; x++ {
					if x < badgeCX-badgeRadius-1 || y > badgeCY+badgeRadius+1 {
						if img.NRGBAAt(x, y) != plainImg.NRGBAAt(x, y) {
							t.Fatalf("pixel (%d,%d) outside the badge changed", x, y)
						}
					}
				}
			}
		})
	}
}

// Each count a person can tell apart has its own image; above nine they all read "9+".
func TestTrayIconCountsDiffer(t *testing.T) {
	ti := trayIconsFor(t)
	seen := map[string]string{}
	for _, tone := range []badgeTone{badgeAmber, badgeRed} {
		for n := 0; n <= 10; n++ {
			b, err := ti.icon(n, tone)
			if err != nil {
				t.Fatal(err)
			}
			pix := string(decodeIcon(t, b).Pix)
			name := fmt.Sprintf("%d %v", n, tone)
			if n == 0 {
				name = "plain"
			}
			if prev, ok := seen[pix]; ok && prev != name {
				t.Errorf("%s looks the same as %s", name, prev)
			}
			seen[pix] = name
		}
		ten, _ := ti.icon(10, tone)
		for _, n := range []int{12, 99, 1000} {
			b, _ := ti.icon(n, tone)
			if !bytes.Equal(decodeIcon(t, b).Pix, decodeIcon(t, ten).Pix) {
				t.Errorf("%d %v differs from 10: want both \"9+\"", n, tone)
			}
		}
	}
	if len(seen) != 21 {
		t.Errorf("distinct icons = %d; want 21 (plain, 1–9 and 9+ in two tones)", len(seen))
	}
}

// A panel gets no half-transparent pixel: systray's pixmap conversion garbles them.
func TestTrayIconAlphaIsBinary(t *testing.T) {
	ti := trayIconsFor(t)
	for _, n := range []int{0, 3, 12} {
		b, _ := ti.icon(n, badgeRed)
		img := decodeIcon(t, b)
		for i := 3; i < len(img.Pix); i += 4 {
			if a := img.Pix[i]; a != 0 && a != 0xff {
				t.Fatalf("icon %d: pixel %d has alpha %d", n, i/4, a)
			}
		}
	}
}

func TestTrayBadgeTone(t *testing.T) {
	p1 := permission.PendingRequest{ID: "a"}
	p1.Tier = permission.P1
	p1only := p1
	p1only.InteractiveOnly = true
	p2 := permission.PendingRequest{ID: "b"}
	p2.Tier = permission.P2
	many := make([]permission.PendingRequest, 12)
	for i := range many {
		many[i] = p1
	}
	tests := []struct {
		name    string
		pending []permission.PendingRequest
		n       int
		tone    badgeTone
		label   string
	}{
		{"none", nil, 0, badgeNone, ""},
		{"one P1", []permission.PendingRequest{p1}, 1, badgeAmber, "1"},
		{"P1 and P2", []permission.PendingRequest{p1, p2}, 2, badgeRed, "2"},
		{"interactive-only P1", []permission.PendingRequest{p1only}, 1, badgeRed, "1"},
		{"twelve P1", many, 12, badgeAmber, "9+"},
		{"twelve with a P2", append(many[:11:11], p2), 12, badgeRed, "9+"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, tone := trayBadge(tt.pending)
			if n != tt.n || tone != tt.tone || badgeLabel(n) != tt.label {
				t.Errorf("badge = %d %v %q; want %d %v %q", n, tone, badgeLabel(n), tt.n, tt.tone, tt.label)
			}
		})
	}
}

// A rebuild asks for the icon again and again: the second time costs a map lookup.
func TestTrayIconCached(t *testing.T) {
	ti := trayIconsFor(t)
	a, _ := ti.icon(4, badgeRed)
	b, _ := ti.icon(4, badgeRed)
	if &a[0] != &b[0] {
		t.Error("the same icon was rendered twice")
	}
	c, _ := ti.icon(0, badgeNone)
	d, _ := ti.icon(0, badgeAmber)
	if &c[0] != &d[0] {
		t.Error("the plain icon was rendered twice")
	}
}

func TestTrayIconBase(t *testing.T) {
	if _, err := newTrayIcons([]byte("not a png")); err == nil {
		t.Error("a base icon that is not an image was accepted")
	}
	// No app icon: the badge alone on a transparent square.
	ti, err := newTrayIcons(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ti.icon(0, badgeNone)
	for i, p := range decodeIcon(t, b).Pix {
		if p != 0 {
			t.Fatalf("the plain icon without an app icon has paint at byte %d", i)
		}
	}
	b, _ = ti.icon(2, badgeRed)
	if c := census(decodeIcon(t, b), redPx); c.red < 600 || c.white < 40 {
		t.Errorf("badge without an app icon: %+v", c)
	}
}

func TestScaleToSquare(t *testing.T) {
	solid := func(w, h int, c color.NRGBA) image.Image {
		img := image.NewNRGBA(image.Rect(0, 0, w, h))
		draw.Draw(img, img.Rect, image.NewUniform(c), image.Point{}, draw.Src)
		return img
	}
	blue := color.NRGBA{0x20, 0x40, 0xf0, 0xff}
	halfRed := color.NRGBA{0xff, 0, 0, 0x80}
	tests := []struct {
		name      string
		src       image.Image
		painted   image.Rectangle // where the scaled image lands
		want      color.NRGBA
		tolerance bool
	}{
		{"square shrinks", solid(512, 512, blue), image.Rect(0, 0, 64, 64), blue, false},
		{"wide is centred", solid(100, 50, blue), image.Rect(0, 16, 64, 48), blue, false},
		{"tall is centred", solid(30, 120, blue), image.Rect(24, 0, 40, 64), blue, false},
		{"small grows", solid(8, 8, blue), image.Rect(0, 0, 64, 64), blue, false},
		{"translucent keeps its colour", solid(128, 128, halfRed), image.Rect(0, 0, 64, 64), halfRed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := scaleToSquare(tt.src, 64)
			for y := 0; y < 64; y++ {
				for x := 0; x < 64; x++ {
					got := color.NRGBAModel.Convert(out.At(x, y)).(color.NRGBA)
					want := color.NRGBA{}
					if image.Pt(x, y).In(tt.painted) {
						want = tt.want
					}
					if got != want && !(tt.tolerance && near(got, want)) {
						t.Fatalf("pixel (%d,%d) = %v; want %v", x, y, got, want)
					}
				}
			}
		})
	}
}

func BenchmarkTrayIconBase(b *testing.B) {
	icon := appIcon(b)
	for b.Loop() {
		if _, err := newTrayIcons(icon); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTrayIconCold(b *testing.B) {
	ti := trayIconsFor(b)
	for b.Loop() {
		if _, err := ti.render(iconKey(12, badgeRed)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTrayIconCached(b *testing.B) {
	ti := trayIconsFor(b)
	for b.Loop() {
		if _, err := ti.icon(12, badgeRed); err != nil {
			b.Fatal(err)
		}
	}
}
