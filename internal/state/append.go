package state

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// Adding a record is what a one-shot `mcptask call --detach` does, and the proxy for every task
// a host creates. Rewriting the whole ledger for it (temp file, fsync, rename, fsync of the
// directory) made that cost grow with the ledger: 98 ms at 5,000 records against 51 ms for an
// empty one (issue 21). appendLines adds the records' lines in place instead, with one fsync:
//
//   - the file ends in "\n]}\n" as every writer leaves it; the new line, led by a comma when
//     records precede it, is written over that "]}\n" followed by a new "]}\n", so the file is
//     valid JSON again the moment the write is complete, and older mcptask binaries read it
//     with their general decoder;
//   - a writer killed during that write can only damage the bytes it was writing: the last
//     line is cut short, or the "]}" is missing. Every earlier line is untouched. Readers
//     skip such a line (parseLines) and the next writer keeps it aside and rewrites the file
//     (Store.keepTorn), so no complete record is ever lost;
//   - the record is durable when Put returns: the write is followed by fsync, under the
//     exclusive lock, as before.

// header is the first line of a ledger this mcptask writes.
var header = []byte(headerPrefix + strconv.Itoa(Version) + `,"tasks":[` + "\n")

// closing ends the file.
var closing = []byte("]}\n")

// appendLines adds lines at the end of the ledger in place and fsyncs it. It reports false, having
// written nothing, when the file is not one it can add to as it stands: missing, in another
// layout or version, or damaged. The caller then rewrites the ledger. The caller holds the
// exclusive lock.
func (s *Store) appendLines(lines [][]byte) (bool, error) {
	f, err := os.OpenFile(s.path, os.O_RDWR|noFollow, 0)
	if errors.Is(err, os.ErrNotExist) || isLink(s.path) {
		// A symbolic link is not appended through: the rewrite replaces the link itself.
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("open the task ledger: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("read the task ledger: %w", err)
	}
	size := fi.Size()
	if !fi.Mode().IsRegular() || size < int64(len(header)+len(closing)) {
		return false, nil
	}
	head := make([]byte, len(header))
	if _, err := f.ReadAt(head, 0); err != nil {
		return false, nil
	}
	if !bytes.Equal(head, header) {
		return false, nil // another version or layout: the rewrite reads it properly
	}
	empty := size == int64(len(header)+len(closing))
	// Without records the file is the header and "]}\n"; with them, the last line is a whole
	// record: "}" then "\n]}\n".
	want, at := closing, size-int64(len(closing))
	if !empty {
		want, at = []byte("}\n]}\n"), size-5
	}
	tail := make([]byte, len(want))
	if _, err := f.ReadAt(tail, at); err != nil && !errors.Is(err, io.EOF) {
		return false, nil
	}
	if !bytes.Equal(tail, want) {
		return false, nil // no closing line: a writer was killed here; the rewrite repairs it
	}
	n := len(closing)
	for _, line := range lines {
		n += len(line) + 2
	}
	buf := make([]byte, 0, n)
	for i, line := range lines {
		if !empty || i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, line...)
		buf = append(buf, '\n')
	}
	buf = append(buf, closing...)
	end := size - int64(len(closing))
	if _, err := f.WriteAt(buf, end); err != nil {
		// Put the end back as it was, so the file stays whole; if even that fails, the next
		// writer finds a cut-short line and repairs it.
		if _, rerr := f.WriteAt(closing, end); rerr == nil {
			_ = f.Truncate(size)
		}
		return false, fmt.Errorf("write the task ledger: %w", err)
	}
	if err := f.Sync(); err != nil {
		return false, fmt.Errorf("write the task ledger: %w", err)
	}
	return true, nil
}

// isLink reports whether path is a symbolic link.
func isLink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}
