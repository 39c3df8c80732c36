package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/cliutil"
	"github.com/ragbench/ragbench/internal/testenv"
)

// docLine is a ragbench command line found in the README or docs/: in a fenced block, or an inline
// code span.
type docLine struct {
	file string
	line int
	text string
	// synopsis lines ([--flag], SPEC..., a|b alternatives) describe usage; the others run as written.
	synopsis bool
	// inline is a code span in prose, which may name a command group ("ragbench ngram").
	inline bool
	// vars are the shell variable assignments before the line in its block (D=hotpotqa).
	vars []string
	// shell is a line of a sh/bash block that is not a ragbench command but makes a file for the
	// lines after it (it ends in "> FILE"): the doc runner runs it in order, like the others.
	shell bool
	// ci is a line of a yaml block: a step of a CI workflow.
	ci bool
}

// makesFileRE matches a shell line that writes a file (… > FILE).
var makesFileRE = regexp.MustCompile(`[^>&2]>\s*[\w./-]+$`)

var assignRE = regexp.MustCompile(`^(export )?[A-Za-z_][A-Za-z0-9_]*=\S*$`)

var synopsisRE = regexp.MustCompile(`(^|\s)\[|\.\.\.|…|\\\|`)

// docCommandLines reads every ragbench command line of README.md and docs/*.md at test time, so that
// edits by anyone are checked.
func docCommandLines(t *testing.T) []docLine {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var out []docLine
	inline := regexp.MustCompile("`((?:go run \\./cmd/ragbench|ragbench) [^`]+)`")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		lines := strings.Split(string(b), "\n")
		fenced, shBlock, yamlBlock := false, false, false
		var vars []string
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "```") {
				fenced = !fenced
				shBlock = fenced && (t == "```sh" || t == "```bash")
				yamlBlock = fenced && t == "```yaml"
				vars = nil
				continue
			}
			if fenced {
				s := strings.TrimPrefix(strings.TrimSpace(l), "$ ")
				if a := stripComment(s); assignRE.MatchString(a) {
					vars = append(vars, a)
					continue
				}
				if !strings.HasPrefix(s, "ragbench ") && !strings.HasPrefix(s, "go run ./cmd/ragbench ") && !strings.Contains(s, " ragbench ") {
					if a := stripComment(s); shBlock && makesFileRE.MatchString(a) {
						out = append(out, docLine{file: rel, line: i + 1, text: a, shell: true, vars: append([]string(nil), vars...)})
					}
					continue
				}
				start := i
				for strings.HasSuffix(s, "\\") && i+1 < len(lines) {
					i++
					s = strings.TrimSuffix(s, "\\") + " " + strings.TrimSpace(lines[i])
				}
				out = append(out, docLine{file: rel, line: start + 1, text: s, synopsis: synopsisRE.MatchString(stripComment(s)), vars: append([]string(nil), vars...), ci: yamlBlock})
				continue
			}
			for _, m := range inline.FindAllStringSubmatch(l, -1) {
				// "ragbench index build|bench" in prose names alternatives.
				alt := strings.Contains(strings.SplitN(m[1], " -", 2)[0], "|")
				out = append(out, docLine{file: rel, line: i + 1, text: m[1], synopsis: alt || synopsisRE.MatchString(m[1]), inline: true})
			}
		}
	}
	return out
}

// stripComment cuts a shell comment (an unquoted # after a space).
func stripComment(s string) string {
	q := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			} else if c == '\\' && q == '"' {
				i++
			}
		case c == '\'' || c == '"':
			q = c
		case c == '#' && (i == 0 || s[i-1] == ' '):
			return strings.TrimSpace(s[:i])
		}
	}
	return s
}

// shellWords splits a command line as a POSIX shell would for the parts that matter here: quotes,
// $'…', backslashes; it returns the simple commands of a list or pipeline (split at unquoted |, &&,
// ;) with redirections removed, and whether a | touched a word (bm25|dense reads as a pipe).
func shellWords(s string) (cmds [][]string, gluedPipe bool) {
	s = stripComment(s)
	var cur []string
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			cur = append(cur, w.String())
			w.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		flush()
		if len(cur) > 0 {
			cmds = append(cmds, cur)
		}
		cur = nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '$' && i+1 < len(s) && s[i+1] == '\'':
			j := strings.IndexByte(s[i+2:], '\'')
			if j < 0 {
				j = len(s) - i - 2
			}
			w.WriteString(strings.ReplaceAll(s[i+2:i+2+j], `\n`, "\n"))
			inWord = true
			i += j + 2
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		case c == '|' || c == ';' || c == '&':
			if c == '|' && inWord && i+1 < len(s) && s[i+1] != ' ' && s[i+1] != '|' {
				gluedPipe = true
			}
			endCmd()
			if i+1 < len(s) && (s[i+1] == '|' || s[i+1] == '&') {
				i++
			}
		case c == '>' || c == '<':
			if inWord && (w.String() == "2" || w.String() == "1") {
				w.Reset()
				inWord = false
			}
			flush()
			if i+1 < len(s) && (s[i+1] == '>' || s[i+1] == '&') {
				i++
			}
			// drop the target word
			for i+1 < len(s) && s[i+1] == ' ' {
				i++
			}
			for i+1 < len(s) && s[i+1] != ' ' {
				i++
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return cmds, gluedPipe
}

// ragbenchArgs returns the arguments after the program of each ragbench command in cmds.
func ragbenchArgs(cmds [][]string) [][]string {
	var out [][]string
	for _, c := range cmds {
		for len(c) > 0 && (strings.Contains(c[0], "=") && !strings.HasPrefix(c[0], "-") || c[0] == "time" || c[0] == "/usr/bin/time" || c[0] == "-v" || c[0] == "env") {
			c = c[1:]
		}
		switch {
		case len(c) >= 3 && c[0] == "go" && c[1] == "run" && c[2] == "./cmd/ragbench":
			out = append(out, c[3:])
		case len(c) >= 1 && (c[0] == "ragbench" || strings.HasSuffix(c[0], "/ragbench")):
			out = append(out, c[1:])
		}
	}
	return out
}

// checkArgs checks a command line's words against the command tree: the command exists, every flag
// is one of its flags (or a global one), a flag that takes a value has one, and no more arguments
// than the command takes. Synopsis lines are checked for their command and flag names only.
func checkArgs(app *cli.App, args []string, synopsis, inline bool) error {
	flags, subs := append(app.Flags, cliutil.OutputFlags()...), app.Commands
	var cmd *cli.Command
	var pos []string
	path := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 && !(a[1] >= '0' && a[1] <= '9') {
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if synopsis {
				name, _, _ = strings.Cut(strings.TrimSuffix(name, "\\"), "|")
				name = strings.TrimSuffix(name, "\\")
			}
			if name == "help" || name == "h" || name == "version" || name == "v" && cmd == nil {
				continue
			}
			var f cli.Flag
			for _, fl := range append(flags, cliutil.OutputFlags()...) {
				if slices.Contains(fl.Names(), name) {
					f = fl
					break
				}
			}
			if f == nil {
				where := "ragbench"
				if path != "" {
					where = "ragbench" + path
				}
				return fmt.Errorf("%s has no flag %s", where, a)
			}
			if v, ok := f.(cli.DocGenerationFlag); ok && v.TakesValue() && !hasValue {
				if i+1 >= len(args) {
					if synopsis {
						continue
					}
					return fmt.Errorf("%s needs a value", a)
				}
				i++
			}
			continue
		}
		if len(pos) == 0 {
			if s := findCmd(subs, a); s != nil {
				cmd, path = s, path+" "+s.Name
				flags, subs = s.Flags, s.Subcommands
				continue
			}
		}
		pos = append(pos, a)
	}
	if cmd == nil {
		if len(args) == 0 || len(pos) == 0 {
			return nil // ragbench --version, ragbench --help
		}
		return fmt.Errorf("no command %q", pos[0])
	}
	if cmd.Action == nil && len(cmd.Subcommands) > 0 && !synopsis && !inline && !slices.Contains(args, "--help") {
		return fmt.Errorf("ragbench%s needs a subcommand", path)
	}
	if !synopsis {
		if max := cliutil.MaxArgs(cmd.ArgsUsage); max >= 0 && len(pos) > max {
			return fmt.Errorf("ragbench%s takes at most %d arguments, got %q", path, max, pos)
		}
	}
	return nil
}

func findCmd(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// TestDocCommandLines checks every ragbench command line of README.md and docs/ as written against
// the command tree: commands and flags exist, values are given, no stray arguments, and no | glued to
// a word (--kind bm25|dense, which a shell reads as a pipe into a program "dense"). It reads the docs
// when it runs, so it checks what other people wrote too.
func TestDocCommandLines(t *testing.T) {
	app := &cli.App{Name: "ragbench", Flags: cliutil.OutputFlags(), Commands: registry}
	lines := docCommandLines(t)
	if len(lines) < 100 {
		t.Fatalf("found %d command lines in the docs; the extraction is broken", len(lines))
	}
	runnable := 0
	for _, l := range lines {
		cmds, glued := shellWords(l.text)
		if glued && !l.synopsis {
			t.Errorf("%s:%d: a | glued to a word reads as a pipe in a shell: %s", l.file, l.line, l.text)
		}
		for _, args := range ragbenchArgs(cmds) {
			if err := checkArgs(app, args, l.synopsis, l.inline); err != nil {
				t.Errorf("%s:%d: %v\n\t%s", l.file, l.line, err, l.text)
			}
		}
		if !l.synopsis {
			runnable++
		}
	}
	t.Logf("%d command lines, %d runnable as written, %d synopses", len(lines), runnable, len(lines)-runnable)
}

func TestShellWords(t *testing.T) {
	cases := []struct {
		in    string
		want  string
		glued bool
	}{
		{`ragbench a --q "x y" 'z' # c`, `ragbench|a|--q|x y|z`, false},
		{`ragbench index build --kind bm25|dense --out X`, `ragbench|index|build|--kind|bm25 ; dense|--out|X`, true},
		{`ragbench x > out.txt 2>&1 && ragbench y`, `ragbench|x ; ragbench|y`, false},
		{`ragbench llm complete $'a\nb'`, "ragbench|llm|complete|a\nb", false},
	}
	for _, c := range cases {
		cmds, glued := shellWords(c.in)
		var parts []string
		for _, cmd := range cmds {
			parts = append(parts, strings.Join(cmd, "|"))
		}
		if got := strings.Join(parts, " ; "); got != c.want || glued != c.glued {
			t.Errorf("%q: %q glued %v, want %q %v", c.in, got, glued, c.want, c.glued)
		}
	}
}
