//go:build race

package memchild

// Race is true in a build with the race detector, whose shadow memory multiplies the
// resident size of what a test allocates and whose checks slow it down.
const Race = true
