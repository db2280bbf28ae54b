package cmd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcptask/mcptask/internal/suggest"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// This file words the usage errors cobra and pflag find as a person fixes them: what is
// wrong, in mcptask's words, and the likely fix (the argument a command needs, the flag that
// was meant, the unit a duration lacks). Their type, not their text, still decides exit 2;
// Run points each one at its command's help (helpCommand).

// argsError words a wrong argument count of c, whose Args check failed with err.
func argsError(c *cobra.Command, args []string, err error) error {
	name := usageName(c)
	want := argPlaceholder(c)
	word := strings.Trim(want, "<>[].")
	what := strings.ReplaceAll(word, "-", " ")
	if what == "tool" {
		what = "tool name"
	}
	switch {
	case len(args) > 0 && c.HasAvailableSubCommands():
		return unknownCommand(c, args[0])
	case len(args) == 0 && want != "":
		return flagErrorf("%s needs a %s: %s %s", name, what, c.CommandPath(), strings.ToUpper(word))
	case len(args) > 0 && want == "":
		return flagErrorf("%s takes no arguments, not %q", name, args[0])
	case len(args) > 0:
		return flagErrorf("%s takes one %s, not %d arguments (%s): quote a value that has spaces", name, what, len(args), strings.Join(quoted(args), " "))
	}
	return &FlagError{Err: err}
}

// unknownCommand words an unknown subcommand word of c, with the commands it is close to.
func unknownCommand(c *cobra.Command, word string) error {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
			names = append(names, sub.Aliases...)
		}
	}
	msg := fmt.Sprintf("unknown command %q for %s", word, c.CommandPath())
	if near := suggest.Closest(word, names); len(near) > 0 {
		msg += "; did you mean " + suggest.Phrase(near) + "?"
	}
	return flagErrorf("%s", msg)
}

// flagError words a flag error pflag found while parsing c's flags.
func flagError(c *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	var ie *pflag.InvalidValueError
	var re *pflag.ValueRequiredError
	switch {
	case errors.As(err, &ne):
		if sh := ne.GetSpecifiedShortnames(); sh != "" {
			in := ""
			if len(sh) > 1 {
				in = " in -" + sh
			}
			return flagErrorf("unknown flag -%s%s for %s", ne.GetSpecifiedName()[:1], in, usageName(c))
		}
		name := ne.GetSpecifiedName()
		msg := fmt.Sprintf("unknown flag --%s for %s", name, usageName(c))
		var names []string
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			if !fl.Hidden {
				names = append(names, fl.Name)
			}
		})
		if near := suggest.Closest(name, names); len(near) > 0 {
			for i := range near {
				near[i] = "--" + near[i]
			}
			msg += "; did you mean " + suggest.Phrase(near) + "?"
		}
		return flagErrorf("%s", msg)
	case errors.As(err, &ie):
		return flagErrorf("%s", badValue(ie.GetFlag(), ie.GetValue(), errors.Unwrap(ie)))
	case errors.As(err, &re):
		fl := re.GetFlag()
		ph, _ := pflag.UnquoteUsage(fl)
		return flagErrorf("--%s needs a value: --%s %s", fl.Name, fl.Name, ph)
	}
	return &FlagError{Err: err}
}

// badValue says what is wrong with value for fl, by the flag's type.
func badValue(fl *pflag.Flag, value string, cause error) string {
	at := fmt.Sprintf("--%s %s", fl.Name, value)
	switch t := fl.Value.Type(); {
	case t == "duration":
		if _, err := strconv.ParseFloat(value, 64); err == nil {
			return fmt.Sprintf("%s: a duration needs a unit: use %ss (or %sm, %sh)", at, value, value, value)
		}
		return at + ": not a duration (like 30s, 5m or 1h30m)"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return at + ": want a whole number"
	case strings.HasPrefix(t, "float"):
		return at + ": want a number"
	case t == "bool":
		return at + ": want true or false"
	}
	if cause != nil {
		return at + ": " + cause.Error()
	}
	return at + ": not a valid value"
}

// usageName is c as a person names it: "call", "servers trust", or "mcptask" for the root.
func usageName(c *cobra.Command) string {
	if c.Root() == c {
		return c.Name()
	}
	_, rest, _ := strings.Cut(c.CommandPath(), " ")
	return rest
}

// argPlaceholder is the first word of c's Use line after its name when it names an
// argument ("<tool>", "<task-id>...", "[task-id...]"); "" when it names none.
func argPlaceholder(c *cobra.Command) string {
	for _, w := range strings.Fields(c.Use)[1:] {
		if strings.HasPrefix(w, "<") && !strings.HasPrefix(w, "<command") {
			return w
		}
		if strings.HasPrefix(w, "[") && !strings.HasPrefix(w, "[-") && !strings.HasPrefix(w, "[flags") {
			return w
		}
	}
	return ""
}

func quoted(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strconv.Quote(a)
	}
	return out
}

// helpCommand is the command whose help a usage error of the command line args points to:
// the deepest command args name ("mcptask call"), the root when they name none.
func helpCommand(root *cobra.Command, args []string) string {
	c, _, err := root.Find(args)
	if err != nil || c == nil {
		return root.CommandPath()
	}
	return c.CommandPath()
}
