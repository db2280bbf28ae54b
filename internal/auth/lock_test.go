//go:build unix || windows

package auth

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// lockHolderEnv makes the test binary, run again as a child, a process that holds the lock
// of the file it names until its stdin closes.
const lockHolderEnv = "MCPTASK_TEST_LOCK_HOLDER"

func TestMain(m *testing.M) {
	if path := os.Getenv(lockHolderEnv); path != "" {
		os.Exit(holdLock(path))
	}
	os.Exit(m.Run())
}

func holdLock(path string) int {
	unlock, err := lockPath(context.Background(), path)
	if err != nil {
		os.Stdout.WriteString("error: " + err.Error() + "\n")
		return 1
	}
	os.Stdout.WriteString("locked\n")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes stdin
	unlock()
	return 0
}

// TestLockExcludesOtherProcesses: while another process holds a credential's lock, this one
// waits for it (and gives up when its context ends); once the holder lets go, it gets the
// lock. This is what keeps two processes from spending one rotated refresh token, with flock
// on unix and LockFileEx on Windows.
func TestLockExcludesOtherProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks", "cred.lock")
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), lockHolderEnv+"="+path)
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = child.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("the lock holder said %q (%v)", line, err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if unlock, err := lockPath(ctx, path); err == nil {
		unlock()
		t.Fatal("took the lock while another process held it")
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting for a held lock: %v, want the context's deadline", err)
	}

	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		unlock, err := lockPath(ctx, path)
		if err == nil {
			unlock()
		}
		got <- err
	}()
	stdin.Close() // the holder unlocks and exits
	if err := <-got; err != nil {
		t.Fatalf("the lock was not taken after its holder let go: %v", err)
	}
}

// TestLockReleasedWhenHolderDies: a process that dies holding the lock does not leave it
// held (the kernel releases it), so a crashed mcptask never blocks the others.
func TestLockReleasedWhenHolderDies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks", "cred.lock")
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), lockHolderEnv+"="+path)
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("the lock holder said %q (%v)", line, err)
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	unlock, err := lockPath(ctx, path)
	if err != nil {
		t.Fatalf("the lock of a killed holder is still held: %v", err)
	}
	unlock()
}
