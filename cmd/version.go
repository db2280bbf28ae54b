package cmd

import (
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// releaseVersion, releaseCommit and releaseDate are set by release builds (GoReleaser's
// ldflags, see .goreleaser.yaml): -X github.com/mcptask/mcptask/cmd.releaseVersion=1.2.3 and so
// on. Left empty, the build info the Go toolchain embeds is used instead, so that
// `go install …@v1.2.3` reports v1.2.3 without any flag.
var (
	releaseVersion = ""
	releaseCommit  = ""
	releaseDate    = ""
)

// Version is the version mcptask reports as clientInfo.version: the release without its "v",
// or "devel".
var Version = clientVersion()

// BuildInfo says which mcptask is running: what `mcptask version` prints and what a bug report
// needs.
type BuildInfo struct {
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

// readBuildInfo combines the release ldflags with the build info the toolchain embedded.
func readBuildInfo() BuildInfo {
	info, _ := debug.ReadBuildInfo()
	return buildInfoFrom(info, releaseVersion, releaseCommit, releaseDate)
}

// buildInfoFrom is readBuildInfo on given inputs (info may be nil).
func buildInfoFrom(info *debug.BuildInfo, relVersion, relCommit, relDate string) BuildInfo {
	bi := BuildInfo{Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
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

// clientVersion is the version mcptask reports as clientInfo.version.
func clientVersion() string {
	v := readBuildInfo().Version
	if v == "(devel)" {
		return "devel"
	}
	return strings.TrimPrefix(v, "v")
}

// String is the one-line form of `mcptask --version`.
func (b BuildInfo) String() string {
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

// NewCmdVersion returns `mcptask version`.
func NewCmdVersion(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Show which mcptask this is: release, commit, Go version",
		Long: `Show the release of mcptask, the commit it was built from and the Go toolchain
that built it, read from the binary itself. A build from a checkout says (devel)
with its revision. 'mcptask --version' prints the same line.

With --json, stdout carries one object:
  {"type":"version","version":"v1.2.3","revision":"…","time":"…","go":"go1.26.8","platform":"linux/amd64"}

EXIT STATUS
  0 always.`,
		Example: `  mcptask version
  mcptask version --json | jq -r .version`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			bi := readBuildInfo()
			return f.printer().Print(struct {
				Type string `json:"type"`
				BuildInfo
			}{"version", bi}, func(w io.Writer) error { _, err := fmt.Fprintln(w, bi.String()); return err })
		},
	}
}
