// Package bench holds mcptask's performance measurements, kept apart from the packages they
// measure so that the server under test can run as a separate process (its CPU time must not
// count as the client's) without adding a TestMain to those packages. The figures live in
// bench/README.md.
package bench
