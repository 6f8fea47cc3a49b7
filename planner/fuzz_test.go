package planner

import (
	"path/filepath"
	"testing"

	"github.com/pipesql/pipesql/parser"
)

// FuzzPlan feeds scripts to a session: whatever the parser accepts, the planner must
// answer with a plan or an error, never a panic. The golden inputs seed it.
func FuzzPlan(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, path := range files {
		cases, _, err := parseGolden(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, c := range cases {
			if c.cmd == "run" {
				f.Add(c.input)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		stmts, err := parser.ParseScript("fuzz.sql", src)
		if err != nil {
			return
		}
		s := mustSession(t, dauDDL)
		for _, st := range stmts {
			switch x := st.(type) {
			case *parser.Insert, *parser.StatementSet, *parser.QueryStatement, *parser.Explain:
				if prog, err := s.Plan(x); err == nil {
					for _, pl := range prog.Pipelines {
						if err := checkPlan(pl.Root); err != nil {
							t.Fatalf("invalid plan for %q: %v", src, err)
						}
					}
					_ = Explain(prog)
				}
			default:
				_ = s.Apply(st)
			}
		}
	})
}
