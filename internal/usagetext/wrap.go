package usagetext

import (
	"strings"
	"unicode/utf8"

	"github.com/spf13/pflag"
)

// Wrap lays text out for width columns. A paragraph of unindented lines is filled again; so
// is an indented block of prose (a list under a heading, like EXIT STATUS), at its indent. An
// indented block that is not prose (a table, with columns two spaces apart; JSON; a
// command) keeps its lines, and a line too long for the width goes on below its last
// column. A word longer than the width is left whole.
func Wrap(text string, width int) string {
	var out, para, block []string
	flush := func() {
		if len(para) > 0 {
			out = append(out, indentWrap(strings.Join(para, " "), width, 0))
			para = nil
		}
		if len(block) > 0 {
			out = append(out, indented(block, width)...)
			block = nil
		}
	}
	for _, line := range strings.Split(text, "\n") {
		switch trimmed := strings.TrimLeft(line, " "); {
		case trimmed == "":
			flush()
			out = append(out, "")
		case trimmed != line:
			if len(para) > 0 {
				flush()
			}
			block = append(block, strings.TrimRight(line, " "))
		default:
			if len(block) > 0 {
				flush()
			}
			para = append(para, strings.TrimRight(line, " "))
		}
	}
	flush()
	return strings.Join(out, "\n")
}

// indented lays out a block of indented lines (Wrap).
func indented(block []string, width int) []string {
	ind := len(block[0]) - len(strings.TrimLeft(block[0], " "))
	prose := true
	for _, l := range block {
		t := strings.TrimLeft(l, " ")
		if len(l)-len(t) != ind || strings.Contains(t, "  ") || strings.ContainsAny(t[:1], "{[$#") || strings.HasPrefix(t, "mcptask ") {
			prose = false
		}
	}
	if prose {
		var words []string
		for _, l := range block {
			words = append(words, strings.TrimSpace(l))
		}
		return []string{indentWrap(strings.Join(words, " "), width, ind)}
	}
	var out []string
	for _, l := range block {
		if utf8.RuneCountInString(l) <= width {
			out = append(out, l)
			continue
		}
		t := strings.TrimLeft(l, " ")
		col := len(l) - len(t)
		if i := strings.LastIndex(t, "  "); i >= 0 {
			col += i + 2
			for col < len(l) && l[col] == ' ' {
				col++
			}
		}
		if col >= width-20 || col >= len(l) {
			out = append(out, l) // no column to hang it on: kept whole
			continue
		}
		out = append(out, l[:col]+hang(l[col:], width, col, col)[col:])
	}
	return out
}

// indentWrap fills s to width, every line indented by ind.
func indentWrap(s string, width, ind int) string { return hang(s, width, ind, ind) }

// hang fills s to width: the first line indented by first, the others by rest.
func hang(s string, width, first, rest int) string {
	return hangWords(units(s), width, first, rest)
}

// units are the words of s, a short 'quoted phrase' (a command: 'mcptask help auth') kept
// as one, so that no line ends inside it.
func units(s string) []string {
	var out []string
	words := strings.Fields(s)
	for i := 0; i < len(words); i++ {
		w := words[i]
		if strings.HasPrefix(w, "'") && strings.Count(w, "'") == 1 {
			for j := i + 1; j < len(words) && j < i+5; j++ {
				if strings.Contains(words[j], "'") {
					w, i = strings.Join(words[i:j+1], " "), j
					break
				}
			}
		}
		out = append(out, w)
	}
	return out
}

// hangWords is hang on words that are never broken (a word may hold spaces: "8 still_running").
func hangWords(words []string, width, first, rest int) string {
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", first))
	col := first
	start := true
	for _, word := range words {
		n := utf8.RuneCountInString(word)
		if !start && col+1+n > width {
			b.WriteString("\n" + strings.Repeat(" ", rest))
			col, start = rest, true
		}
		if !start {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += n
		start = false
	}
	return b.String()
}

// flagBlock lays out the flags of fs for width columns: the flag and its placeholder, then
// its description in one column, wrapped. A flag too long for the column has its
// description start on the next line; on a terminal too narrow for a column at all, every
// description goes below its flag.
func flagBlock(fs *pflag.FlagSet, width int) string {
	type row struct{ name, desc string }
	var rows []row
	widest := 0
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Hidden {
			return
		}
		name, desc := flagLine(fl)
		rows = append(rows, row{name, desc})
		widest = max(widest, utf8.RuneCountInString(name))
	})
	col := min(widest+3, max(width*2/5, 24))
	stacked := width-col < 28
	if stacked {
		col = 10
	}
	var lines []string
	for _, r := range rows {
		n := utf8.RuneCountInString(r.name)
		if stacked || n+2 > col {
			lines = append(lines, r.name, indentWrap(r.desc, width, col))
			continue
		}
		body := hang(r.desc, width, col, col)
		lines = append(lines, r.name+body[n:])
	}
	return strings.Join(lines, "\n")
}

// flagLine is fl as pflag writes it, split into the flag with its placeholder and the
// description (with its default). A placeholder pflag took from the flag's type is made one
// of mcptask's: D for a duration, N for a number, the flag's last word in capitals for a
// string (--login LOGIN); one the usage names in backticks stays as written.
func flagLine(fl *pflag.Flag) (name, desc string) {
	one := pflag.NewFlagSet("", pflag.ContinueOnError)
	one.AddFlag(fl)
	line := strings.TrimRight(one.FlagUsagesWrapped(0), "\n")
	i := strings.Index(line[6:], "   ")
	if i < 0 {
		return line, ""
	}
	name, desc = line[:6+i], strings.TrimSpace(line[6+i:])
	if ph, _ := pflag.UnquoteUsage(fl); ph != "" && !strings.Contains(fl.Usage, "`") {
		var want string
		switch ph {
		case "duration":
			want = "D"
		case "int", "uint", "float", "ints", "uints":
			want = "N"
		case "string", "strings", "stringArray":
			words := strings.Split(fl.Name, "-")
			want = strings.ToUpper(words[len(words)-1])
		}
		if want != "" {
			name = strings.TrimSuffix(name, " "+ph) + " " + want
		}
	}
	return name, desc
}
