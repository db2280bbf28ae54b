package shellquote

import (
	"os/exec"
	"testing"
)

// TestJoinRoundTrip: what Join prints, a real POSIX shell reads back as the same words.
func TestJoinRoundTrip(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	argv := []string{"plain", "two words", "it's", "", "$HOME", "a;b", "*", "--x=y", "tab\there", `back\slash`, "'"}
	got, err := exec.Command(sh, "-c", "for a in "+Join(argv)+"; do printf '[%s]' \"$a\"; done").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, a := range argv {
		want += "[" + a + "]"
	}
	if string(got) != want {
		t.Errorf("sh read back %q, want %q", got, want)
	}
	if q := Quote("plain-word_1.2:x@y"); q != "plain-word_1.2:x@y" {
		t.Errorf("a safe word was quoted: %q", q)
	}
}
