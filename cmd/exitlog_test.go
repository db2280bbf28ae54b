package cmd

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mcptask/mcptask/internal/usagetext"
)

// Every exit code a command returns in the tests must be listed in its help (exitCodes in
// help.go): what "a command can return" is taken from what it did return, in-process
// (runOn), in the testscript scripts and in the child processes the tests start, not from a
// second copy of the list. checkExitLog runs after all the tests (TestMain) and fails the run
// when a command returned a code its help does not list.

// exitLogEnv names the file the mcptask processes a test starts append "path<TAB>code" lines to.
const exitLogEnv = "CMDTEST_EXITLOG"

var (
	exitMu   sync.Mutex
	exitSeen = map[string]map[int]bool{} // command path -> codes seen in this process
)

// commandPath is the command args run ("call", "servers trust"; "" for the root).
func commandPath(args []string) string {
	ios, _, _, _ := TestIO()
	root := NewCmdRoot(NewFactory(ios))
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	c, _, err := root.Find(args)
	if err != nil || c == nil {
		return ""
	}
	p := usagetext.Path(c)
	if strings.HasPrefix(p, "completion ") {
		p = "completion"
	}
	return p
}

// noteExit records that args exited with code, in this process and for the parent test
// process when this is a child of it.
func noteExit(args []string, code int) {
	p := commandPath(args)
	exitMu.Lock()
	if exitSeen[p] == nil {
		exitSeen[p] = map[int]bool{}
	}
	exitSeen[p][code] = true
	exitMu.Unlock()
	if file := os.Getenv(exitLogEnv); file != "" {
		if f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
			fmt.Fprintf(f, "%s\t%d\n", p, code) // one short write: whole even with other writers
			f.Close()
		}
	}
}

// mainLogged is Main, noting its exit code (the child processes and scripts of the tests).
func mainLogged() int {
	code := Main()
	noteExit(os.Args[1:], code)
	return code
}

// startExitLog makes the file the children log to, for checkExitLog.
func startExitLog() (file string, done func()) {
	dir, err := os.MkdirTemp("", "mcptask-exitlog-")
	if err != nil {
		return "", func() {}
	}
	file = filepath.Join(dir, "exits.tsv")
	os.Setenv(exitLogEnv, file)
	return file, func() { os.RemoveAll(dir) }
}

// checkExitLog reports every code a command returned in the tests that its help does not
// list, and whether all were listed.
func checkExitLog(file string) bool {
	seen := map[string]map[int]bool{}
	exitMu.Lock()
	for p, codes := range exitSeen {
		seen[p] = codes
	}
	exitMu.Unlock()
	if f, err := os.Open(file); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			p, c, ok := strings.Cut(sc.Text(), "\t")
			code, err := strconv.Atoi(c)
			if !ok || err != nil {
				continue
			}
			if seen[p] == nil {
				seen[p] = map[int]bool{}
			}
			seen[p][code] = true
		}
		f.Close()
	}
	var bad []string
	for p, codes := range seen {
		var listed []int
		for _, w := range strings.Fields(exitCodes[p]) {
			n, _ := strconv.Atoi(w)
			listed = append(listed, n)
		}
		for code := range codes {
			if !slices.Contains(listed, code) {
				bad = append(bad, fmt.Sprintf("mcptask %s exited %d in a test, but its help does not list %d: add it to exitCodes in cmd/help.go", p, code, code))
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		fmt.Fprintln(os.Stderr, "FAIL:", strings.TrimSpace(strings.ReplaceAll(b, "mcptask  ", "mcptask ")))
	}
	return len(bad) == 0
}
