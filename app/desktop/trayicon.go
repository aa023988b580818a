package desktop

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"sync"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/permission"
)

// The tray icon: Airlock's app icon scaled to trayIconSize, with a round badge in its
// top-right corner that carries the pending count ("9+" above nine). Many panels (GNOME
// with AppIndicator, XFCE) show only the icon, never the item's title, so the count must
// be on the icon itself.
const (
	// trayIconSize is the side of the icon in pixels. Panels draw 16–32 px (more on
	// HiDPI) and scale the pixmap down themselves.
	trayIconSize = 64
	// badgeRadius, badgeCX and badgeCY place the badge: a circle touching the top and
	// right edges of the icon, in pixel-edge coordinates.
	badgeRadius = 18
	badgeCX     = trayIconSize - badgeRadius
	badgeCY     = badgeRadius
	// badgeSamples is the supersampling (per axis) of the badge's edge.
	badgeSamples = 4
)

// badgeTone is the badge's colour: the most demanding pending request decides it, with
// the tiers' colours everywhere else in Airlock (UI.md).
type badgeTone int

const (
	// badgeNone: nothing pending, the plain icon.
	badgeNone badgeTone = iota
	// badgeAmber: only P1 requests, each of which the tray itself may answer.
	badgeAmber
	// badgeRed: at least one P2 or interactive-only request, which only the window can allow.
	badgeRed
)

// String names the tone (test and log output).
func (t badgeTone) String() string {
	switch t {
	case badgeNone:
		return "none"
	case badgeAmber:
		return "amber"
	case badgeRed:
		return "red"
	}
	return fmt.Sprintf("badgeTone(%d)", int(t))
}

var (
	// badgeAmberColour is a dark amber: white digits on it keep a contrast near 3.7:1.
	badgeAmberColour = color.RGBA{0xbd, 0x74, 0x00, 0xff}
	// badgeRedColour is the window's --red-line (#d93a2f), 4.6:1 against white.
	badgeRedColour   = color.RGBA{0xd9, 0x3a, 0x2f, 0xff}
	badgeDigitColour = color.RGBA{0xff, 0xff, 0xff, 0xff}
)

func (t badgeTone) colour() color.RGBA {
	if t == badgeAmber {
		return badgeAmberColour
	}
	return badgeRedColour
}

// trayBadge is what the badge shows for the pending requests: their number, red when one
// of them is P2 or interactive-only (the tray cannot allow it), amber when all are P1.
func trayBadge(pending []permission.PendingRequest) (int, badgeTone) {
	if len(pending) == 0 {
		return 0, badgeNone
	}
	for _, p := range pending {
		if !trayAnswers(p) {
			return len(pending), badgeRed
		}
	}
	return len(pending), badgeAmber
}

// badgeLabel is the text of the badge for n pending requests: "" for none, the digit up
// to nine, then "9+".
func badgeLabel(n int) string {
	switch {
	case n <= 0:
		return ""
	case n > 9:
		return "9+"
	default:
		return string(rune('0' + n))
	}
}

// glyphs is a 3×5 bitmap font for the badge: each row's three low bits, left to right.
var glyphs = map[rune][5]uint8{
	'0': {0b111, 0b101, 0b101, 0b101, 0b111},
	'1': {0b010, 0b110, 0b010, 0b010, 0b111},
	'2': {0b111, 0b001, 0b111, 0b100, 0b111},
	'3': {0b111, 0b001, 0b111, 0b001, 0b111},
	'4': {0b101, 0b101, 0b111, 0b001, 0b001},
	'5': {0b111, 0b100, 0b111, 0b001, 0b111},
	'6': {0b111, 0b100, 0b111, 0b101, 0b111},
	'7': {0b111, 0b001, 0b010, 0b010, 0b010},
	'8': {0b111, 0b101, 0b111, 0b101, 0b111},
	'9': {0b111, 0b101, 0b111, 0b001, 0b111},
	'+': {0b000, 0b010, 0b111, 0b010, 0b000},
}

const (
	glyphW = 3
	glyphH = 5
)

// trayIconKey names one rendered icon.
type trayIconKey struct {
	label string
	tone  badgeTone
	// sandbox is the sandbox indicator's level when it is not green (api.IndicatorAmber,
	// api.IndicatorRed): a disc in the bottom-left corner. "" draws none.
	sandbox string
}

// The sandbox mark: a disc in the bottom-left corner, where the pending badge never is.
const (
	sandboxRadius = 14
	sandboxCX     = sandboxRadius
	sandboxCY     = trayIconSize - sandboxRadius
)

// sandboxMark is the level the icon marks: amber and red, never green (the plain icon
// is the sandbox holding every promise).
func sandboxMark(level string) string {
	if level == api.IndicatorAmber || level == api.IndicatorRed {
		return level
	}
	return ""
}

// trayIcons renders the tray icon for a pending count and keeps every icon it rendered:
// there are at most 63 (ten labels in two tones, and the plain icon, each with no
// sandbox mark, an amber or a red one).
type trayIcons struct {
	base *image.RGBA // the app icon at trayIconSize, premultiplied

	mu    sync.Mutex
	cache map[trayIconKey][]byte
}

// newTrayIcons scales basePNG to the tray size once. An empty basePNG gives a transparent
// base (the badge alone); a basePNG that is not an image is an error.
func newTrayIcons(basePNG []byte) (*trayIcons, error) {
	base := image.NewRGBA(image.Rect(0, 0, trayIconSize, trayIconSize))
	if len(basePNG) > 0 {
		img, _, err := image.Decode(bytes.NewReader(basePNG))
		if err != nil {
			return nil, fmt.Errorf("tray icon: decode the app icon: %w", err)
		}
		base = scaleToSquare(img, trayIconSize)
	}
	return &trayIcons{base: base, cache: make(map[trayIconKey][]byte)}, nil
}

// iconKey names the icon for n pending requests in tone: the plain icon (the zero key)
// when n is 0 or tone is badgeNone.
func iconKey(n int, tone badgeTone) trayIconKey {
	if n <= 0 || tone == badgeNone {
		return trayIconKey{}
	}
	return trayIconKey{label: badgeLabel(n), tone: tone}
}

// icon returns the PNG for n pending requests in tone, with no sandbox mark.
func (ti *trayIcons) icon(n int, tone badgeTone) ([]byte, error) {
	return ti.iconFor(iconKey(n, tone))
}

// iconFor returns the PNG for key.
func (ti *trayIcons) iconFor(key trayIconKey) ([]byte, error) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if b, ok := ti.cache[key]; ok {
		return b, nil
	}
	b, err := ti.render(key)
	if err != nil {
		return nil, err
	}
	ti.cache[key] = b
	return b, nil
}

// render draws the icon for key without the cache.
func (ti *trayIcons) render(key trayIconKey) ([]byte, error) {
	img := image.NewRGBA(ti.base.Rect)
	copy(img.Pix, ti.base.Pix)
	if key.label != "" {
		drawBadge(img, key.tone.colour())
		drawLabel(img, key.label)
	}
	switch key.sandbox {
	case api.IndicatorRed:
		drawDisc(img, sandboxCX, sandboxCY, sandboxRadius, badgeRedColour)
	case api.IndicatorAmber:
		drawDisc(img, sandboxCX, sandboxCY, sandboxRadius, badgeAmberColour)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, binaryAlpha(img)); err != nil {
		return nil, fmt.Errorf("tray icon: encode %q: %w", key.label, err)
	}
	return buf.Bytes(), nil
}

// drawBadge paints the badge disc over img.
func drawBadge(img *image.RGBA, c color.RGBA) {
	drawDisc(img, badgeCX, badgeCY, badgeRadius, c)
}

// drawDisc paints a disc of radius r centred on (cx, cy) over img, its edge antialiased
// by supersampling.
func drawDisc(img *image.RGBA, cx, cy, r int, c color.RGBA) {
	r2 := float64(r * r)
	for y := cy - r; y < cy+r; y++ {
		for x := cx - r; x < cx+r; x++ {
			inside := 0
			for sy := 0; sy < badgeSamples; sy++ {
				for sx := 0; sx < badgeSamples; sx++ {
					dx := float64(x) + (float64(sx)+0.5)/badgeSamples - float64(cx)
					dy := float64(y) + (float64(sy)+0.5)/badgeSamples - float64(cy)
					if dx*dx+dy*dy <= r2 {
						inside++
					}
				}
			}
			if inside > 0 {
				blend(img, x, y, c, uint32(inside*255/(badgeSamples*badgeSamples)))
			}
		}
	}
}

// drawLabel writes label in white, centred on the badge: one glyph four pixels to a
// font pixel, two glyphs three.
func drawLabel(img *image.RGBA, label string) {
	runes := []rune(label)
	scale := 4
	if len(runes) > 1 {
		scale = 3
	}
	w := (len(runes)*(glyphW+1) - 1) * scale
	h := glyphH * scale
	x0 := badgeCX - (w+1)/2
	y0 := badgeCY - (h+1)/2
	for i, r := range runes {
		g := glyphs[r]
		for row := 0; row < glyphH; row++ {
			for col := 0; col < glyphW; col++ {
				if g[row]&(1<<(glyphW-1-col)) == 0 {
					continue
				}
				cell := image.Rect(0, 0, scale, scale).Add(image.Pt(
					x0+(i*(glyphW+1)+col)*scale, y0+row*scale))
				draw.Draw(img, cell, image.NewUniform(badgeDigitColour), image.Point{}, draw.Src)
			}
		}
	}
}

// blend paints c over the pixel (x, y) with coverage cov (0–255).
func blend(img *image.RGBA, x, y int, c color.RGBA, cov uint32) {
	i := img.PixOffset(x, y)
	p := img.Pix[i : i+4 : i+4]
	src := [4]uint32{uint32(c.R), uint32(c.G), uint32(c.B), uint32(c.A)}
	for k := range p {
		s := src[k] * cov / 255
		p[k] = uint8(s + uint32(p[k])*(255-cov*uint32(c.A)/255)/255)
	}
}

// binaryAlpha returns img with every pixel either opaque or transparent. fyne.io/systray
// v1.12.2 builds the IconPixmap from the low byte of Go's premultiplied 16-bit colour,
// which is noise for a half-transparent pixel; opaque and transparent pixels come out
// exact. Panels scale the 64 px icon down, which smooths the edge again.
func binaryAlpha(img *image.RGBA) *image.NRGBA {
	out := image.NewNRGBA(img.Rect)
	for i := 0; i < len(img.Pix); i += 4 {
		a := uint32(img.Pix[i+3])
		if a < 128 {
			continue
		}
		for k := 0; k < 3; k++ {
			out.Pix[i+k] = uint8(min(uint32(img.Pix[i+k])*255/a, 255))
		}
		out.Pix[i+3] = 0xff
	}
	return out
}

// scaleToSquare scales src into a size×size square, keeping its aspect ratio (centred),
// by averaging the source pixels that fall in each target pixel (nearest pixel when
// enlarging). Premultiplied, so transparent pixels add no colour.
func scaleToSquare(src image.Image, size int) *image.RGBA {
	b := src.Bounds()
	rgba := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(rgba, rgba.Rect, src, b.Min, draw.Src)
	sw, sh := b.Dx(), b.Dy()
	dw, dh := size, size
	if sw > sh {
		dh = max(1, size*sh/sw)
	} else if sh > sw {
		dw = max(1, size*sw/sh)
	}
	ox, oy := (size-dw)/2, (size-dh)/2
	out := image.NewRGBA(image.Rect(0, 0, size, size))
	if sw == 0 || sh == 0 {
		return out
	}
	for dy := 0; dy < dh; dy++ {
		y0, y1 := dy*sh/dh, (dy+1)*sh/dh
		y1 = max(y1, y0+1)
		for dx := 0; dx < dw; dx++ {
			x0, x1 := dx*sw/dw, (dx+1)*sw/dw
			x1 = max(x1, x0+1)
			var sum [4]uint32
			for y := y0; y < y1; y++ {
				row := rgba.Pix[y*rgba.Stride:]
				for x := x0; x < x1; x++ {
					for k := 0; k < 4; k++ {
						sum[k] += uint32(row[x*4+k])
					}
				}
			}
			n := uint32((y1 - y0) * (x1 - x0))
			o := out.PixOffset(ox+dx, oy+dy)
			for k := 0; k < 4; k++ {
				out.Pix[o+k] = uint8((sum[k] + n/2) / n)
			}
		}
	}
	return out
}
