// Package buildinfo says which mcptask is running: the release, the commit it was built from
// and the toolchain, read from the binary itself. It exists so that `mcptask version`,
// `mcptask --version` and the clientInfo.version sent to servers share one reading of the
// release ldflags and the build info the Go toolchain embeds.
package buildinfo

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
)

// releaseVersion, releaseCommit and releaseDate are set by release builds (GoReleaser's
// ldflags, see .goreleaser.yaml): -X github.com/mcptask/mcptask/internal/buildinfo.releaseVersion=1.2.3
// and so on. Left empty, the build info the Go toolchain embeds is used instead, so that
// `go install …@v1.2.3` reports v1.2.3 without any flag.
var (
	releaseVersion = ""
	releaseCommit  = ""
	releaseDate    = ""
)

// Info says which mcptask is running: what `mcptask version` prints and what a bug report
// needs.
type Info struct {
	// Version is the release (v1.2.3), or "(devel)" for a build from a checkout.
	Version string `json:"version"`
	// Revision and Time are the VCS commit the binary was built from and its date, when known.
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	// Modified says the checkout had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// Go is the toolchain that built the binary; Platform is GOOS/GOARCH.
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// pseudoVersion matches the versions the go command invents for an untagged commit
// (v0.0.0-20261124181437-149993714acd) and the +dirty it adds for a modified checkout.
var pseudoVersion = regexp.MustCompile(`-(0\.)?\d{14}-[0-9a-f]{12}|\+dirty$`)

// Read combines the release ldflags with the build info the toolchain embedded.
func Read() Info {
	info, _ := debug.ReadBuildInfo()
	return from(info, releaseVersion, releaseCommit, releaseDate)
}

// from is Read on given inputs (info may be nil).
func from(info *debug.BuildInfo, relVersion, relCommit, relDate string) Info {
	bi := Info{Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info != nil {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				bi.Revision = s.Value
			case "vcs.time":
				bi.Time = s.Value
			case "vcs.modified":
				bi.Modified = s.Value == "true"
			}
		}
		// `go install module@v1.2.3` records v1.2.3. A build in a checkout records "(devel)"
		// or, since Go 1.24, a pseudo-version of the commit: that is a development build too,
		// and its revision says which one.
		if v := info.Main.Version; v != "" && v != "(devel)" && !pseudoVersion.MatchString(v) {
			bi.Version = v
		}
	}
	if relVersion != "" {
		bi.Version = relVersion
		if !strings.HasPrefix(bi.Version, "v") && bi.Version[0] >= '0' && bi.Version[0] <= '9' {
			bi.Version = "v" + bi.Version
		}
	}
	// A snapshot built without git state says "none" and the zero date: not worth showing.
	if relCommit == "none" || relCommit == "unknown" {
		relCommit = ""
	}
	if strings.HasPrefix(relDate, "0001-") {
		relDate = ""
	}
	if relCommit != "" {
		bi.Revision = relCommit
	}
	if relDate != "" {
		bi.Time = relDate
	}
	return bi
}

// ClientVersion is the version mcptask reports as clientInfo.version: the release without its
// "v", or "devel".
func ClientVersion() string {
	v := Read().Version
	if v == "(devel)" {
		return "devel"
	}
	return strings.TrimPrefix(v, "v")
}

// String is the one-line form of `mcptask --version`.
func (b Info) String() string {
	var extra []string
	if b.Revision != "" {
		rev := b.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if b.Modified {
			rev += "-dirty"
		}
		if len(b.Time) >= 10 {
			rev += " of " + b.Time[:10] // the commit's date; --json has the time
		}
		extra = append(extra, "revision "+rev)
	}
	extra = append(extra, b.Go, b.Platform)
	return fmt.Sprintf("mcptask %s (%s)", b.Version, strings.Join(extra, ", "))
}
