package planner

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/parser"
)

var update = flag.Bool("update", false, "rewrite the expected output of testdata/*.txt")

// Golden tests
//
// Each file under testdata/ is a sequence of cases that share one session (so a file
// declares its tables once). A case is a command line, its input, a "----" line, and the
// expected output up to a blank line; an output that contains blank lines is written
// between "----" / "----" fences instead:
//
//	run
//	SELECT a FROM t;
//	----
//	== Physical Plan ==
//	...
//
// Commands:
//
//	run [file=name.sql]   the input is a script: catalog statements and SET are applied,
//	                      then INSERTs, statement sets and queries are planned together
//	                      and their EXPLAIN is the output ("ok" when there are none);
//	                      the first error ends the case and is the output, with the
//	                      source line and a caret under the column
//	describe NAME         Session.Describe, one row per line, cells joined by " | "
//	show-create NAME      Session.ShowCreate
//	settings              Session.Settings, one key=value per line
//
// go test ./planner -update rewrites every expected output from what the planner gives.

type goldenCase struct {
	line   int    // line of the command, for failure messages
	head   string // comments and the command line
	cmd    string
	args   []string
	input  string
	want   string
	fenced bool
}

func parseGolden(path string) (cases []*goldenCase, tail string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	lines := strings.Split(string(data), "\n")
	var head []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			head = append(head, l)
			continue
		}
		c := &goldenCase{line: i + 1}
		fields := strings.Fields(l)
		c.cmd, c.args = fields[0], fields[1:]
		head = append(head, l)
		c.head = strings.Join(head, "\n")
		head = nil
		var in []string
		for i++; i < len(lines) && lines[i] != "----"; i++ {
			in = append(in, lines[i])
		}
		if i >= len(lines) {
			return nil, "", fmt.Errorf("%s:%d: case has no ---- line", path, c.line)
		}
		c.input = strings.Join(in, "\n")
		var out []string
		if i+1 < len(lines) && lines[i+1] == "----" {
			c.fenced = true
			for i += 2; i+1 < len(lines) && !(lines[i] == "----" && lines[i+1] == "----"); i++ {
				out = append(out, lines[i])
			}
			i++
		} else {
			for i++; i < len(lines) && lines[i] != ""; i++ {
				out = append(out, lines[i])
			}
			i--
		}
		c.want = strings.Join(out, "\n")
		cases = append(cases, c)
	}
	return cases, strings.Join(head, "\n"), nil
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden files under testdata/")
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			cases, tail, err := parseGolden(path)
			if err != nil {
				t.Fatal(err)
			}
			s := NewSession()
			var out strings.Builder
			for _, c := range cases {
				got := strings.TrimRight(runGolden(t, s, c), "\n")
				if !*update && got != c.want {
					t.Errorf("%s:%d: %s\n--- got:\n%s\n--- want:\n%s", path, c.line, c.cmd, got, c.want)
				}
				out.WriteString(c.head)
				out.WriteString("\n")
				if c.input != "" {
					out.WriteString(c.input)
					out.WriteString("\n")
				}
				out.WriteString("----\n")
				if strings.Contains(got, "\n\n") || got == "" {
					out.WriteString("----\n" + got + "\n----\n----\n")
				} else {
					out.WriteString(got + "\n")
				}
			}
			out.WriteString(tail)
			if *update {
				if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func runGolden(t *testing.T, s *Session, c *goldenCase) string {
	switch c.cmd {
	case "run":
		file := "test.sql"
		for _, a := range c.args {
			if v, ok := strings.CutPrefix(a, "file="); ok {
				file = v
			}
		}
		return runScript(s, file, c.input)
	case "describe":
		rows, err := s.Describe(parser.ObjectName(strings.Split(c.args[0], ".")))
		if err != nil {
			return err.Error()
		}
		var b strings.Builder
		for _, r := range rows {
			b.WriteString(strings.Join(r, " | "))
			b.WriteByte('\n')
		}
		return b.String()
	case "show-create":
		out, err := s.ShowCreate(parser.ObjectName(strings.Split(c.args[0], ".")))
		if err != nil {
			return err.Error()
		}
		return out
	case "settings":
		var b strings.Builder
		for _, kv := range s.Settings() {
			fmt.Fprintf(&b, "%s=%s\n", kv[0], kv[1])
		}
		return b.String()
	}
	t.Fatalf("line %d: unknown command %q", c.line, c.cmd)
	return ""
}

// runScript applies the catalog statements of src and explains the rest together.
func runScript(s *Session, file, src string) string {
	stmts, err := parser.ParseScript(file, src)
	if err != nil {
		return showError(err, src)
	}
	var plan []parser.Statement
	for _, st := range stmts {
		switch st.(type) {
		case *parser.Insert, *parser.StatementSet, *parser.QueryStatement, *parser.Explain:
			plan = append(plan, st)
			continue
		}
		if err := s.Apply(st); err != nil {
			return showError(err, src)
		}
	}
	if len(plan) == 0 {
		return "ok"
	}
	for i, st := range plan {
		if e, ok := st.(*parser.Explain); ok {
			plan[i] = e.Stmt
		}
	}
	prog, err := s.Plan(plan...)
	if err != nil {
		return showError(err, src)
	}
	for _, pl := range prog.Pipelines {
		if err := checkPlan(pl.Root); err != nil {
			return "INVALID PLAN: " + err.Error() + "\n" + Explain(prog)
		}
	}
	return Explain(prog)
}

// showError renders err with its source line; every planner error must carry a position.
func showError(err error, src string) string {
	var pe *parser.Error
	if !errors.As(err, &pe) {
		return "UNPOSITIONED: " + err.Error()
	}
	return pe.WithSource(src).Error()
}
