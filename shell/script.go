package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/pipesql/pipesql/config"
	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/engine"
	"github.com/pipesql/pipesql/funcs"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// Runner executes the statements of job files against one planner session. run,
// explain and the shell share it, so a file means the same thing in all three.
type Runner struct {
	session *planner.Session
	sources map[string]string // file name -> text, to show the line of a positioned error
	out     io.Writer
	eng     *engine.Engine
	watch   func(ctx context.Context) (stop func())
	warn    func(msg string)

	explainOnly bool
	// chatty confirms each statement that prints nothing else, as Flink's SQL client does;
	// the interactive shell is chatty, scripts are quiet so that their output is the results.
	chatty bool
	// jobs are the INSERT jobs planned so far, run together by RunJobs.
	jobs []*planner.Program
}

// RunnerOptions configures a Runner.
type RunnerOptions struct {
	// Out receives what statements print: tables, plans, the rows of a SELECT.
	Out io.Writer
	// Engine runs the jobs and queries. Required unless ExplainOnly.
	Engine *engine.Engine
	// ExplainOnly validates and plans INSERT and SELECT statements, printing their
	// plans, without running them.
	ExplainOnly bool
	// Watch, when set, shows the jobs' progress while RunJobs waits for them; it returns
	// the function that ends the showing.
	Watch func(ctx context.Context) (stop func())
	// Warn, when set, receives the warnings of SET statements and --set flags (a key
	// without effect in pipesql); the interactive shell prints them as [WARN] lines.
	Warn func(msg string)
}

// NewRunner returns a Runner with an empty session.
func NewRunner(opts RunnerOptions) *Runner {
	return &Runner{
		session: planner.NewSession(), sources: map[string]string{}, out: opts.Out,
		eng: opts.Engine, watch: opts.Watch, explainOnly: opts.ExplainOnly, warn: opts.Warn,
	}
}

// Session returns the runner's planner session.
func (r *Runner) Session() *planner.Session { return r.session }

// ApplySets applies --set KEY=VALUE flags.
func (r *Runner) ApplySets(sets []string) error {
	for _, kv := range sets {
		key, value, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(key) == "" {
			return userErr{fmt.Errorf("--set %q: expected KEY=VALUE", kv)}
		}
		if err := r.session.Set(strings.TrimSpace(key), strings.TrimSpace(value)); err != nil {
			return userErr{fmt.Errorf("--set %s: %w", key, err)}
		}
		r.showWarnings()
	}
	return nil
}

// ParseFile reads and parses a job file.
func (r *Runner) ParseFile(file string) ([]parser.Statement, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, userErr{err}
	}
	return r.ParseText(file, string(src))
}

// ParseText parses the statements of src, read from file.
func (r *Runner) ParseText(file, src string) ([]parser.Statement, error) {
	r.sources[file] = src
	stmts, err := parser.ParseScript(file, src)
	if err != nil {
		return nil, r.sqlErr(err)
	}
	return stmts, nil
}

// sqlErr marks err as the user's and, when it has a position, attaches the source line.
func (r *Runner) sqlErr(err error) error {
	var perr *parser.Error
	if errors.As(err, &perr) && perr.LineText == "" {
		if src, ok := r.sources[perr.Pos.File]; ok {
			return userErr{perr.WithSource(src)}
		}
	}
	return userErr{err}
}

// Execute runs one statement. INSERT statements are planned and queued as jobs, for
// RunJobs; a SELECT runs at once and prints its rows.
func (r *Runner) Execute(ctx context.Context, stmt parser.Statement) error {
	switch s := stmt.(type) {
	case *parser.Set:
		if s.Key == "" {
			r.printTable([]string{"key", "value"}, settingsRows(r.session.Settings()))
			return nil
		}
		if err := r.session.Apply(s); err != nil {
			return r.sqlErr(err)
		}
		r.showWarnings()
		r.confirm()
		return nil
	case *parser.CreateTable:
		if err := r.session.Apply(s); err != nil {
			return r.sqlErr(err)
		}
		if s.AsQuery != nil {
			// CREATE TABLE ... AS SELECT runs its query into the new table.
			return r.Execute(ctx, planner.CTASInsert(s))
		}
		r.confirm()
		return nil
	case *parser.CreateView, *parser.DropTable, *parser.DropView, *parser.Reset:
		if err := r.session.Apply(s); err != nil {
			return r.sqlErr(err)
		}
		r.confirm()
		return nil
	case *parser.Show:
		return r.show(s)
	case *parser.Describe:
		rows, err := r.session.Describe(s.Name)
		if err != nil {
			return r.sqlErr(err)
		}
		r.printTable(planner.DescribeHeader, rows)
		return nil
	case *parser.Explain:
		text, err := r.session.Explain(s.Stmt)
		if err != nil {
			return r.sqlErr(err)
		}
		fmt.Fprintln(r.out, strings.TrimRight(text, "\n"))
		return nil
	case *parser.Insert, *parser.StatementSet:
		prog, err := r.session.Plan(s)
		if err != nil {
			return r.sqlErr(err)
		}
		if r.explainOnly {
			fmt.Fprintln(r.out, strings.TrimRight(planner.Explain(prog), "\n"))
			return nil
		}
		r.jobs = append(r.jobs, prog)
		return nil
	case *parser.QueryStatement:
		prog, err := r.session.Plan(s)
		if err != nil {
			return r.sqlErr(err)
		}
		if r.explainOnly {
			fmt.Fprintln(r.out, strings.TrimRight(planner.Explain(prog), "\n"))
			return nil
		}
		return r.runQuery(ctx, prog)
	case *parser.Help:
		fmt.Fprint(r.out, helpText)
		return nil
	case *parser.Quit:
		return nil
	case *parser.StopJob:
		return r.sqlErr(parser.Errorf(s.At, "STOP JOB is only available in the interactive shell"))
	}
	return r.sqlErr(parser.Errorf(stmt.Pos(), "unsupported statement %s", parser.Format(stmt)))
}

// showFilter returns which names a SHOW ... [NOT] LIKE | ILIKE 'pattern' lists.
func showFilter(l *parser.ShowLike) (func(string) bool, error) {
	if l == nil {
		return func(string) bool { return true }, nil
	}
	pattern := l.Pattern
	if l.IgnoreCase {
		pattern = strings.ToLower(pattern)
	}
	match, err := funcs.MatchLike(pattern)
	if err != nil {
		return nil, err
	}
	return func(name string) bool {
		if l.IgnoreCase {
			name = strings.ToLower(name)
		}
		return match(name) != l.Not
	}, nil
}

func (r *Runner) show(s *parser.Show) error {
	keep, err := showFilter(s.Like)
	if err != nil {
		return r.sqlErr(parser.Errorf(s.At, "%v", err))
	}
	names := func(all []string) [][]string {
		var rows [][]string
		for _, n := range all {
			if keep(n) {
				rows = append(rows, []string{n})
			}
		}
		return rows
	}
	switch s.What {
	case parser.ShowTables:
		r.printTable([]string{"table name"}, names(r.session.Tables()))
	case parser.ShowViews:
		r.printTable([]string{"view name"}, names(r.session.Views()))
	case parser.ShowFunctions:
		r.printTable([]string{"function name"}, names(funcs.Names()))
	case parser.ShowColumns:
		rows, err := r.session.Describe(s.Name)
		if err != nil {
			return r.sqlErr(err)
		}
		var kept [][]string
		for _, row := range rows {
			if keep(row[0]) {
				kept = append(kept, row)
			}
		}
		r.printTable(planner.DescribeHeader, kept)
	case parser.ShowJobs:
		r.printTable([]string{"job id", "job name", "status", "start time"}, nil)
	case parser.ShowCreateTable, parser.ShowCreateView:
		text, err := r.session.ShowCreate(s.Name)
		if err != nil {
			return r.sqlErr(err)
		}
		fmt.Fprintln(r.out, strings.TrimRight(text, "\n"))
	}
	return nil
}

// RunJobs submits the queued INSERT jobs to the engine together and waits until all
// finish or ctx is cancelled. The first job failure stops the others.
func (r *Runner) RunJobs(ctx context.Context) error {
	if len(r.jobs) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	jobs, err := r.eng.SubmitAll(ctx, r.jobs)
	if err != nil {
		return r.submitErr(err)
	}
	if r.watch != nil {
		defer r.watch(ctx)()
	}
	var wg sync.WaitGroup
	errs := make([]error, len(jobs))
	for i, job := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := job.Wait(); err != nil {
				errs[i] = userError(fmt.Errorf("job %s failed: %w", jobName(r.jobs[i], i), err))
				cancel(errs[i])
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// submitErr marks the errors of a submission that are the user's.
func (r *Runner) submitErr(err error) error {
	if errors.Is(err, engine.ErrInvalidJob) {
		return r.sqlErr(err)
	}
	return err
}

func jobName(prog *planner.Program, i int) string {
	if name := config.Read(prog.Settings).String(config.PipelineName); name != "" {
		return fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("#%d", i+1)
}

// runQuery runs a SELECT and prints its rows as a tableau (an appended text table),
// Flink's result mode for non-interactive runs.
func (r *Runner) runQuery(ctx context.Context, prog *planner.Program) error {
	schema := prog.Pipelines[0].Root.Schema()
	tw := newTableau(r.out, schema)
	job, err := r.eng.Query(prog, func(kind connectors.RowKind, row types.Row) {
		tw.row(kind, row)
	})
	if err != nil {
		return r.submitErr(err)
	}
	tw.header()
	err = job.Run(ctx)
	tw.footer()
	return err
}

// showWarnings shows the session's warnings: a [WARN] line in the interactive shell,
// else through RunnerOptions.Warn.
func (r *Runner) showWarnings() {
	for _, w := range r.session.TakeWarnings() {
		switch {
		case r.chatty:
			fmt.Fprintln(r.out, "[WARN] "+w)
		case r.warn != nil:
			r.warn(w)
		}
	}
}

func (r *Runner) confirm() {
	if r.chatty {
		fmt.Fprintln(r.out, "[INFO] Execute statement succeeded.")
	}
}

func settingsRows(kv [][2]string) [][]string {
	rows := make([][]string, len(kv))
	for i, p := range kv {
		rows[i] = []string{p[0], p[1]}
	}
	return rows
}

func (r *Runner) printTable(header []string, rows [][]string) {
	PrintBoxed(r.out, header, rows)
	switch len(rows) {
	case 0:
		fmt.Fprintln(r.out, "Empty set")
	case 1:
		fmt.Fprintln(r.out, "1 row in set")
	default:
		fmt.Fprintf(r.out, "%d rows in set\n", len(rows))
	}
}

const helpText = `The SQL statements pipesql understands:
  CREATE [TEMPORARY] TABLE [IF NOT EXISTS] t (...) WITH ('connector' = '...', ...)
  CREATE [TEMPORARY] VIEW v AS SELECT ...      DROP TABLE|VIEW [IF EXISTS] name
  SET 'key' = 'value'    SET    RESET ['key']
  SHOW TABLES | VIEWS | FUNCTIONS | JOBS | CREATE TABLE t    DESCRIBE t
  EXPLAIN [PLAN FOR] INSERT ... | SELECT ...
  INSERT INTO t SELECT ...    SELECT ...
  EXECUTE STATEMENT SET BEGIN INSERT ...; INSERT ...; END;
  STOP JOB 'id' [WITH SAVEPOINT]    HELP    QUIT
`
