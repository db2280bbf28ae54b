package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReferenceUpToDate: docs/reference is generated from the command tree; regenerate it
// with `go run ./tools/docgen -dir docs/reference` when a command or flag changes.
func TestReferenceUpToDate(t *testing.T) {
	dir := t.TempDir()
	if err := write(dir, false); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	if len(files) < 10 {
		t.Fatalf("only %d reference pages", len(files))
	}
	committed, _ := filepath.Glob(filepath.Join("..", "..", "docs", "reference", "*.md"))
	if len(committed) != len(files) {
		t.Errorf("docs/reference has %d pages, the tree %d; run: go run ./tools/docgen -dir docs/reference", len(committed), len(files))
	}
	for _, f := range files {
		got, _ := os.ReadFile(f)
		want, err := os.ReadFile(filepath.Join("..", "..", "docs", "reference", filepath.Base(f)))
		if err != nil || string(got) != string(want) {
			t.Errorf("docs/reference/%s is stale; run: go run ./tools/docgen -dir docs/reference", filepath.Base(f))
		}
	}
	man := t.TempDir()
	if err := write(man, true); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(man, "*.1")); len(m) < 10 {
		t.Errorf("man pages: %v", m)
	}
}
