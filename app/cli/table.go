package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// printTable writes one row per item as columns aligned under header, or only the line
// empty when there are no items (with empty == "", the header alone). Each cell prints
// as %v prints it, so pass string(b) for JSON bytes.
func printTable[T any](w io.Writer, items []T, empty string, header []string, row func(T) []any) {
	if len(items) == 0 && empty != "" {
		fmt.Fprintln(w, empty)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, it := range items {
		for i, c := range row(it) {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, c)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}
