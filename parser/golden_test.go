package parser

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected output of the golden files in testdata/")

// goldenCase is one case of a datadriven file: a directive line, the input, "----",
// and the expected output. Output holding blank lines sits between "----\n----" and
// "----\n----".
type goldenCase struct {
	line      int      // line of the directive, for failure messages
	preamble  []string // comments and blank lines before the case, kept on rewrite
	directive string
	input     string
	expected  string
}

func readGolden(t *testing.T, path string) (cases []goldenCase, trailer []string) {
	return readGoldenFile(t, path)
}

func readGoldenFile(t testing.TB, path string) (cases []goldenCase, trailer []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var pre []string
	for i := 0; i < len(lines); {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			pre = append(pre, line)
			i++
			continue
		}
		c := goldenCase{line: i + 1, preamble: pre, directive: line}
		pre = nil
		i++
		var in []string
		for i < len(lines) && lines[i] != "----" {
			in = append(in, lines[i])
			i++
		}
		if i >= len(lines) {
			t.Fatalf("%s:%d: case has no ---- line", path, c.line)
		}
		i++
		c.input = strings.Join(in, "\n")
		var out []string
		if i < len(lines) && lines[i] == "----" {
			i++
			for i < len(lines) && !(lines[i] == "----" && i+1 < len(lines) && lines[i+1] == "----") {
				out = append(out, lines[i])
				i++
			}
			i += 2
		} else {
			for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
				out = append(out, lines[i])
				i++
			}
		}
		c.expected = strings.Join(out, "\n")
		cases = append(cases, c)
	}
	return cases, pre
}

func writeGolden(t *testing.T, path string, cases []goldenCase, trailer []string) {
	t.Helper()
	var b strings.Builder
	for _, c := range cases {
		for _, p := range c.preamble {
			b.WriteString(p + "\n")
		}
		b.WriteString(c.directive + "\n")
		if c.input != "" {
			b.WriteString(c.input + "\n")
		}
		b.WriteString("----\n")
		if strings.Contains(c.expected, "\n\n") || strings.HasPrefix(c.expected, "\n") || c.expected == "" {
			b.WriteString("----\n" + c.expected + "\n----\n----\n")
		} else {
			b.WriteString(c.expected + "\n")
		}
	}
	for _, p := range trailer {
		b.WriteString(p + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runDirective computes the output of one case.
func runDirective(directive, input string) string {
	fields := strings.Fields(directive)
	file := "test.sql"
	for _, f := range fields[1:] {
		if v, ok := strings.CutPrefix(f, "file="); ok {
			file = v
		}
	}
	switch fields[0] {
	case "parse":
		st, err := ParseStatement(file, input)
		if err != nil {
			return "error: " + err.Error()
		}
		return Format(st)
	case "script":
		stmts, err := ParseScript(file, input)
		if err != nil {
			return "error: " + err.Error()
		}
		var out []string
		for _, st := range stmts {
			out = append(out, Format(st)+";")
		}
		return strings.Join(out, "\n")
	case "expr":
		e, err := ParseExpr(file, input)
		if err != nil {
			return "error: " + err.Error()
		}
		return Format(e)
	case "split":
		chunks, err := Split(file, input)
		if err != nil {
			return "error: " + err.Error()
		}
		var out []string
		for _, c := range chunks {
			out = append(out, fmt.Sprintf("%d:%d: %q", c.Pos.Line, c.Pos.Col, c.Text))
		}
		return strings.Join(out, "\n")
	case "complete":
		return fmt.Sprint(StatementComplete(input))
	case "ast":
		stmts, err := ParseScript(file, input)
		if err != nil {
			return "error: " + err.Error()
		}
		var b strings.Builder
		for _, st := range stmts {
			dumpNode(&b, reflect.ValueOf(st), "", "")
		}
		return strings.TrimRight(b.String(), "\n")
	}
	return "unknown directive " + fields[0]
}

var posType = reflect.TypeOf(Pos{})

// dumpNode prints an AST as an indented tree, each node with its line:col, so that
// the golden files pin positions down.
func dumpNode(b *strings.Builder, v reflect.Value, indent, label string) {
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == posType {
			return
		}
		fmt.Fprintf(b, "%s%s%s", indent, label, v.Type().Name())
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); f.Type == posType && (f.Name == "At") {
				p := v.Field(i).Interface().(Pos)
				fmt.Fprintf(b, " @%d:%d", p.Line, p.Col)
			}
		}
		var scalars []string
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			fv := v.Field(i)
			switch fv.Kind() {
			case reflect.String:
				if fv.String() != "" {
					scalars = append(scalars, fmt.Sprintf("%s=%q", f.Name, fv.String()))
				}
			case reflect.Bool:
				if fv.Bool() {
					scalars = append(scalars, f.Name)
				}
			case reflect.Int:
				if fv.Int() != 0 {
					scalars = append(scalars, fmt.Sprintf("%s=%d", f.Name, fv.Int()))
				}
			case reflect.Uint8:
				if fv.Uint() != 0 {
					scalars = append(scalars, fmt.Sprintf("%s=%v", f.Name, fv.Interface()))
				}
			case reflect.Slice:
				if fv.Type().Elem().Kind() == reflect.String && fv.Len() > 0 {
					scalars = append(scalars, fmt.Sprintf("%s=%q", f.Name, fv.Interface()))
				}
				if fv.Type().Elem().Kind() == reflect.Int && fv.Len() > 0 {
					scalars = append(scalars, fmt.Sprintf("%s=%v", f.Name, fv.Interface()))
				}
			case reflect.Struct:
				if p, ok := fv.Interface().(Pos); ok && f.Name != "At" && p.Line != 0 {
					scalars = append(scalars, fmt.Sprintf("%s=%d:%d", f.Name, p.Line, p.Col))
				}
			}
		}
		if len(scalars) > 0 {
			b.WriteString(" " + strings.Join(scalars, " "))
		}
		b.WriteString("\n")
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			fv := v.Field(i)
			switch fv.Kind() {
			case reflect.Interface, reflect.Pointer:
				dumpNode(b, fv, indent+"  ", f.Name+": ")
			case reflect.Struct:
				if f.Type != posType {
					dumpNode(b, fv, indent+"  ", f.Name+": ")
				}
			case reflect.Slice:
				k := fv.Type().Elem().Kind()
				if k == reflect.String || k == reflect.Int {
					continue
				}
				for j := 0; j < fv.Len(); j++ {
					dumpNode(b, fv.Index(j), indent+"  ", fmt.Sprintf("%s[%d]: ", f.Name, j))
				}
			}
		}
	}
}

func goldenFiles(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	return files
}

// TestGolden runs every case of testdata/*.txt; -update rewrites the expected output.
func TestGolden(t *testing.T) {
	for _, path := range goldenFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			cases, trailer := readGolden(t, path)
			changed := false
			for i := range cases {
				c := &cases[i]
				got := runDirective(c.directive, c.input)
				if got != c.expected {
					if *update {
						c.expected = got
						changed = true
						continue
					}
					t.Errorf("%s:%d: %s\n%s\n---- got:\n%s\n---- want:\n%s", path, c.line, c.directive, c.input, got, c.expected)
				}
			}
			if changed {
				writeGolden(t, path, cases, trailer)
			}
		})
	}
}

// clearPositions zeroes every Pos in a tree, so that trees parsed from different text
// compare equal when they mean the same.
func clearPositions(v reflect.Value) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if !v.IsNil() {
			clearPositions(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == posType {
			if v.CanSet() {
				v.Set(reflect.Zero(posType))
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			clearPositions(v.Field(i))
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			clearPositions(v.Index(i))
		}
	}
}

// checkStable parses the formatted form of stmts again and checks that the trees are
// the same and that formatting again changes nothing.
func checkStable(t testing.TB, where string, stmts []Statement) {
	t.Helper()
	var parts []string
	for _, st := range stmts {
		parts = append(parts, Format(st))
	}
	text := strings.Join(parts, ";\n") + ";"
	again, err := ParseScript("formatted.sql", text)
	if err != nil {
		t.Fatalf("%s: formatted output does not parse: %v\n%s", where, err, text)
	}
	var parts2 []string
	for _, st := range again {
		parts2 = append(parts2, Format(st))
	}
	text2 := strings.Join(parts2, ";\n") + ";"
	if text != text2 {
		t.Fatalf("%s: format is not stable:\n%s\n---- then:\n%s", where, text, text2)
	}
	for _, st := range stmts {
		clearPositions(reflect.ValueOf(st))
	}
	for _, st := range again {
		clearPositions(reflect.ValueOf(st))
	}
	if !reflect.DeepEqual(stmts, again) {
		t.Fatalf("%s: the formatted text parses to a different tree:\n%s", where, text)
	}
}

// TestFormatStable checks parse -> format -> parse -> format over every golden input
// that parses.
func TestFormatStable(t *testing.T) {
	n := 0
	for _, path := range goldenFiles(t) {
		cases, _ := readGolden(t, path)
		for _, c := range cases {
			d := strings.Fields(c.directive)[0]
			where := fmt.Sprintf("%s:%d", path, c.line)
			switch d {
			case "parse", "script", "ast":
				stmts, err := ParseScript("in.sql", c.input)
				if err != nil {
					continue
				}
				checkStable(t, where, stmts)
				n++
			case "expr":
				e, err := ParseExpr("in.sql", c.input)
				if err != nil {
					continue
				}
				text := Format(e)
				e2, err := ParseExpr("formatted.sql", text)
				if err != nil {
					t.Fatalf("%s: formatted expression does not parse: %v\n%s", where, err, text)
				}
				if Format(e2) != text {
					t.Fatalf("%s: expression format is not stable: %s then %s", where, text, Format(e2))
				}
				n++
			}
		}
	}
	t.Logf("%d golden inputs parse and format stably", n)
	if n < 80 {
		t.Fatalf("only %d golden inputs parse; the suite needs at least 80", n)
	}
}
