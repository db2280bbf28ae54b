package connect

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/auth"
	"github.com/mcptask/mcptask/internal/exitcode"
)

// keyFile writes a PEM EC private key to a file and returns its path.
func keyFile(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAuthOptionsCheck: every OAuth setting that cannot work is a exitcode.UsageError naming its
// flag, found before anything is sent; settings that can work pass.
func TestAuthOptionsCheck(t *testing.T) {
	ok := AuthOptions{Login: auth.LoginAuto, Browser: auth.BrowserOpen, Store: auth.StoreAuto}
	key := keyFile(t)
	notKey := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notKey, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return map[string]string{"SECRET": "s"}[k] }
	for _, tc := range []struct {
		name string
		edit func(*AuthOptions)
		want string // "" for no error
	}{
		{"defaults", func(*AuthOptions) {}, ""},
		{"login", func(a *AuthOptions) { a.Login = "always" }, `--login "always": want auto or never`},
		{"browser", func(a *AuthOptions) { a.Browser = "lynx" }, "--browser"},
		{"store", func(a *AuthOptions) { a.Store = "vault" }, "--auth-store"},
		{"grant", func(a *AuthOptions) { a.Grant = "password" }, `--grant "password"`},
		{"cc without id", func(a *AuthOptions) { a.Grant = "client-credentials" }, "needs --client-id"},
		{"cc without secret", func(a *AuthOptions) { a.Grant, a.ClientID = "client-credentials", "cid" }, "needs --client-secret-env VAR or --client-key-file FILE"},
		{"cc", func(a *AuthOptions) { a.Grant, a.ClientID, a.ClientSecretEnv = "client-credentials", "cid", "SECRET" }, ""},
		{"port", func(a *AuthOptions) { a.CallbackPort = 70000 }, "--callback-port 70000 is not a port"},
		{"metadata url", func(a *AuthOptions) { a.ClientMetadataURL = "http://x/c.json" }, "--client-metadata-url"},
		{"issuer", func(a *AuthOptions) { a.Issuer = "http://as.example.com" }, "--issuer"},
		{"loopback issuer", func(a *AuthOptions) { a.Issuer = "http://127.0.0.1:9/" }, ""},
		{"empty secret variable", func(a *AuthOptions) { a.ClientSecretEnv = "UNSET" }, "--client-secret-env UNSET: that environment variable is empty or unset"},
		{"missing key file", func(a *AuthOptions) { a.ClientKeyFile = filepath.Join(t.TempDir(), "none.pem") }, "--client-key-file: "},
		{"not a key", func(a *AuthOptions) { a.ClientKeyFile = notKey }, "--client-key-file " + notKey + ": not a PEM file"},
		{"key", func(a *AuthOptions) { a.ClientKeyFile = key }, ""},
	} {
		a := ok
		tc.edit(&a)
		err := a.Check(getenv)
		var ue *exitcode.UsageError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want a exitcode.UsageError with %q", tc.name, err, tc.want)
		}
	}
}

// TestAuthOptionsLogoutOptions: a logout gets the named client with its secret and key read
// now, and no key from a file that holds none.
func TestAuthOptionsLogoutOptions(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"SECRET": "s3cret"}[k] }
	a := AuthOptions{ClientID: "cid", ClientSecretEnv: "SECRET", ClientKeyFile: keyFile(t)}
	o := a.LogoutOptions(getenv, true)
	if !o.ForgetClient || o.ClientID != "cid" || o.ClientSecret != "s3cret" || o.ClientKey == nil {
		t.Fatalf("LogoutOptions = %+v", o)
	}
	a.ClientKeyFile = filepath.Join(t.TempDir(), "none.pem")
	if o := a.LogoutOptions(getenv, false); o.ForgetClient || o.ClientKey != nil {
		t.Fatalf("without a key file: %+v", o)
	}
}
