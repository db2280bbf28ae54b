// Command docgen writes mcptask's command reference from its command tree: markdown pages
// (docs/reference, kept current by TestReferenceUpToDate) or, with -man, the man pages the
// release archives carry (.goreleaser.yaml). It is a program of its own, not an mcptask
// command, so that cobra's doc generator and the markdown library under it are not linked
// into mcptask, where their package init cost every start half a millisecond.
//
//	go run ./tools/docgen -dir docs/reference
//	go run ./tools/docgen -man -dir dist-extra/man
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	dir := flag.String("dir", "", "output `DIR` (required)")
	man := flag.Bool("man", false, "write man pages instead of markdown")
	flag.Parse()
	if *dir == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./tools/docgen [-man] -dir DIR")
		os.Exit(2)
	}
	if err := write(*dir, *man); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "wrote the reference to %s\n", *dir)
}
