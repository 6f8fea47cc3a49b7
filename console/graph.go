package console

import (
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/planner"
)

// graphNode is one node of a job's plan, as the page draws it.
type graphNode struct {
	ID       string   `json:"id"`
	Pipeline int      `json:"pipeline"`
	Kind     string   `json:"kind"`    // the plan node's name: Sink, Calc, WindowAggregate ...
	Explain  string   `json:"explain"` // its EXPLAIN line
	Children []string `json:"children"`
	// Task is the runtime task the node runs in ("source events", "window aggregate"),
	// "" for nodes that move nothing in one process (Exchange); Fused is true for the
	// Calc and WatermarkAssigner nodes exec runs inside their scan's source task.
	Task  string `json:"task,omitempty"`
	Fused bool   `json:"fused,omitempty"`
	// op is the index of the task's metrics in exec.Metrics.Operators, -1 for none.
	op int
	// plan is the plan node drawn.
	plan planner.Node
}

// buildGraph lays out the nodes of every pipeline of prog, each pipeline's root first,
// and matches each with the runtime task that runs it. exec compiles a pipeline the
// same way (exec/job.go: a scan or values with the Calc, WatermarkAssigner and Exchange
// nodes right above it is a source task; every other node a task, inputs first, left
// to right; Exchange compiles to nothing) and lists a pipeline's source tasks, then its
// other tasks, in Metrics.Operators. When the names do not match what ops says (exec
// changed), the graph is shown without numbers rather than with wrong ones.
func buildGraph(prog *planner.Program, ops []exec.OperatorMetrics) []*graphNode {
	var all []*graphNode
	for pi, p := range prog.Pipelines {
		if p == nil || p.Root == nil {
			continue
		}
		b := &graphBuilder{pipeline: pi}
		b.node(p.Root, true)
		var mine []int // indexes into ops of this pipeline's tasks
		for i, op := range ops {
			if op.Pipeline == pi {
				mine = append(mine, i)
			}
		}
		ok := len(mine) == len(b.sources)+len(b.tasks)
		for i, src := range b.sources {
			ok = ok && ops[mine[i]].Name == src[0].Task
		}
		for i, n := range b.tasks {
			ok = ok && i+len(b.sources) < len(mine) && strings.HasPrefix(ops[mine[i+len(b.sources)]].Name, taskPrefix(n))
		}
		for i, chain := range b.sources {
			for _, n := range chain {
				n.op = -1
				if ok {
					n.op = mine[i]
				}
			}
		}
		for i, n := range b.tasks {
			n.op = -1
			if ok {
				n.op = mine[len(b.sources)+i]
				n.Task = ops[n.op].Name
			}
		}
		all = append(all, b.nodes...)
	}
	return all
}

// taskPrefix is what the name of n's task starts with, as far as the graph relies on
// it: a sink's task is "sink <table>"; other names are exec's to choose.
func taskPrefix(n *graphNode) string {
	if n.Kind == "Sink" {
		return "sink"
	}
	return ""
}

type graphBuilder struct {
	pipeline int
	nodes    []*graphNode
	sources  [][]*graphNode // per source task, its nodes, scan first
	tasks    []*graphNode   // the other tasks, in exec's order
}

func (b *graphBuilder) add(n planner.Node) *graphNode {
	kind := fmt.Sprintf("%T", n)
	kind = kind[strings.LastIndex(kind, ".")+1:]
	g := &graphNode{ID: fmt.Sprintf("p%d-n%d", b.pipeline, len(b.nodes)+1), Pipeline: b.pipeline, Kind: kind,
		Explain: n.Explain(), Children: []string{}, op: -1, plan: n}
	b.nodes = append(b.nodes, g)
	return g
}

// node adds n and the nodes below it and returns n's id.
func (b *graphBuilder) node(n planner.Node, isRoot bool) string {
	g := b.add(n)
	if _, ok := n.(*planner.Exchange); ok && !isRoot {
		for _, k := range n.Children() {
			g.Children = append(g.Children, b.node(k, false))
		}
		return g.ID
	}
	if !isRoot {
		if chain := sourceChain(n); chain != nil {
			// chain is leaf first; n (the top) is g. Add the rest below it.
			task := "values"
			if s, ok := chain[0].(*planner.TableSourceScan); ok {
				task = "source " + s.Table
			}
			nodes := []*graphNode{g}
			prev := g
			for i := len(chain) - 2; i >= 0; i-- {
				c := b.add(chain[i])
				prev.Children = append(prev.Children, c.ID)
				nodes = append(nodes, c)
				prev = c
			}
			for i, x := range nodes {
				x.Task = task
				_, isExchange := chain[len(chain)-1-i].(*planner.Exchange)
				x.Fused = i < len(nodes)-1 && !isExchange
			}
			// Scan first, as exec lists the task.
			for i, j := 0, len(nodes)-1; i < j; i, j = i+1, j-1 {
				nodes[i], nodes[j] = nodes[j], nodes[i]
			}
			b.sources = append(b.sources, nodes)
			return g.ID
		}
	}
	for _, k := range n.Children() {
		g.Children = append(g.Children, b.node(k, false))
	}
	b.tasks = append(b.tasks, g)
	return g.ID
}

// sourceChain is exec's: the nodes of n's source task, leaf first, or nil when n does
// not start one.
func sourceChain(n planner.Node) []planner.Node {
	var chain []planner.Node
	for {
		switch n.(type) {
		case *planner.TableSourceScan, *planner.Values:
			return append([]planner.Node{n}, chain...)
		case *planner.Calc, *planner.WatermarkAssigner, *planner.Exchange:
			chain = append([]planner.Node{n}, chain...)
			n = n.Children()[0]
		default:
			return nil
		}
	}
}
