package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs.revision", Value: "149993714acd98c4a816ae0e8e5a4616212568e7"},
		{Key: "vcs.time", Value: "2026-11-24T18:14:37Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	for _, tc := range []struct {
		name          string
		main          string
		settings      []debug.BuildSetting
		rel, commit   string
		version, line string
	}{
		// go install github.com/mcptask/mcptask@v1.4.0: a module build, no VCS settings.
		{name: "go install", main: "v1.4.0", version: "v1.4.0", line: "mcptask v1.4.0 ("},
		// go build in a checkout since Go 1.24: a pseudo-version, which is a development build.
		{name: "checkout", main: "v0.0.0-20261124181437-149993714acd+dirty", settings: vcs,
			version: "(devel)", line: "mcptask (devel) (revision 149993714acd-dirty of 2026-11-24, "},
		{name: "go run", main: "(devel)", version: "(devel)", line: "mcptask (devel) (go"},
		// A release build: GoReleaser's ldflags win, and a bare 1.2.3 gets its v.
		{name: "release", main: "(devel)", rel: "1.2.3", commit: "abcdef", version: "v1.2.3", line: "mcptask v1.2.3 (revision abcdef, "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/mcptask/mcptask", Version: tc.main}, Settings: tc.settings}
			bi := from(info, tc.rel, tc.commit, "")
			if bi.Version != tc.version {
				t.Errorf("version = %q, want %q", bi.Version, tc.version)
			}
			if !strings.HasPrefix(bi.String(), tc.line) {
				t.Errorf("line = %q, want it to start with %q", bi.String(), tc.line)
			}
		})
	}
}
