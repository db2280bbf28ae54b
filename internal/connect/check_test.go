package connect

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/auth"
	"github.com/mcptask/mcptask/internal/exitcode"
)

// TestOptionsCheck refuses what a flag got wrong, as a exitcode.UsageError naming the flag, before
// anything is sent.
func TestOptionsCheck(t *testing.T) {
	getenv := func(string) string { return "" }
	flags := AuthOptions{Login: auth.LoginAuto, Browser: auth.BrowserOpen, Store: auth.StoreAuto}
	secret := flags
	secret.ClientID, secret.ClientSecretEnv = "c", "NOPE"
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Protocol: "auto", Auth: flags}, ""},
		{Options{Protocol: "2025-11-25", ConnectTimeout: time.Second, Auth: flags}, ""},
		{Options{Protocol: "auto", ConnectTimeout: -time.Second}, "--connect-timeout -1s"},
		{Options{Protocol: "2024-11-05"}, `--protocol "2024-11-05"`},
		{Options{Protocol: "auto", Auth: secret}, "--client-secret-env NOPE"},
		{Options{Protocol: "auto"}, "--login"},
	} {
		err := tc.o.Check(getenv)
		var ue *exitcode.UsageError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Check(%+v) = %v, want nil", tc.o, err)
		case tc.want != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Check(%+v) = %v, want a exitcode.UsageError with %q", tc.o, err, tc.want)
		}
	}
}
