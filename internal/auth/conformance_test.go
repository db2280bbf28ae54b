package auth_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcptask/mcptask/internal/conformance"
)

// Scenarios of the suite's auth list that mcptask does not implement, and why. Every other
// auth/* client scenario runs, in every version the suite lists for it.
var notImplemented = map[string]string{
	"auth/enterprise-managed-authorization": "extension not implemented (identity assertion grant)",
	"auth/dpop":                             "extension not implemented (DPoP)",
	"auth/dpop-nonce":                       "extension not implemented (DPoP)",
	"auth/wif-jwt-bearer":                   "extension not implemented (workload identity)",
}

// versionsNotRun are spec versions the suite lists that mcptask does not speak: 2025-03-26
// authorization had no protected resource metadata and is superseded (see
// testdata/conformance/auth-notes.md).
var versionsNotRun = map[string]bool{"2025-03-26": true}

var listLine = regexp.MustCompile(`^\s*-\s+(auth/\S+)\s+\[([^\]]*)\]`)

// authScenarios reads the suite's own list of client scenarios: the names under auth/ and the
// versions each is listed for ("extension" for the extension scenarios).
func authScenarios(t *testing.T, s *conformance.Suite) map[string][]string {
	t.Helper()
	out, err := exec.Command(s.Node, s.Script, "list").CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list: %v\n%s", err, out)
	}
	client := false
	res := map[string][]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "Client scenarios") {
			client = true
			continue
		}
		if strings.HasSuffix(strings.TrimSpace(line), ":") {
			client = strings.HasPrefix(line, "Client scenarios")
		}
		if m := listLine.FindStringSubmatch(line); client && m != nil {
			res[m[1]] = strings.Split(m[2], ",")
		}
	}
	if len(res) == 0 {
		t.Fatalf("conformance list names no auth/* client scenario:\n%s", out)
	}
	return res
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildOut  []byte
)

// mcptaskBinary builds mcptask once per test run into dir.
func mcptaskBinary(t *testing.T, dir string) string {
	t.Helper()
	buildOnce.Do(func() {
		binPath = filepath.Join(dir, "mcptask")
		cmd := exec.Command("go", "build", "-o", binPath, "github.com/mcptask/mcptask")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, buildOut)
	}
	return binPath
}

// TestConformanceAuth runs every auth/* client scenario of the pinned official suite, in every
// version it lists, with mcptask as the client through testdata/conformance/auth-driver.sh
// (`mcptask tools`, then `mcptask call test-tool`, --browser follow, a fresh state directory
// per run). Zero FAILURE and zero WARNING; the refusal scenarios expect mcptask to exit
// non-zero, which the suite accounts for.
func TestConformanceAuth(t *testing.T) {
	suite := conformance.Find(t)
	scenarios := authScenarios(t, suite)
	bin := mcptaskBinary(t, t.TempDir())
	driver, err := filepath.Abs("../../testdata/conformance/auth-driver.sh")
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	slices.Sort(names)
	ran := 0
	for _, name := range names {
		if why, skip := notImplemented[name]; skip {
			t.Logf("%s: not run: %s", name, why)
			continue
		}
		for _, v := range scenarios[name] {
			if versionsNotRun[v] {
				continue
			}
			version := v
			if v == "extension" {
				version = ""
			}
			ran++
			t.Run(strings.TrimPrefix(name, "auth/")+"@"+v, func(t *testing.T) {
				t.Parallel()
				res := suite.Client(t, name, version, driver, "MCPTASK_BIN="+bin)
				if len(res.Bad()) > 0 || len(res.Checks) == 0 {
					t.Error(res.Report())
				}
			})
		}
	}
	// 14 shared scenarios x 2 versions, 3 of them also at 2025-06-18, 11 at 2026-07-28 only,
	// 2 extensions: a suite upgrade that changes this is noticed here.
	if ran < 14*2+3+11+2 {
		t.Errorf("ran %d auth scenario runs; the suite lists fewer than expected", ran)
	}
}

// keep bytes imported for helpers added later.
var _ = bytes.NewReader
var _ = os.Getenv
