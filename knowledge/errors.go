package knowledge

import (
	"errors"
	"fmt"
	"slices"
)

// RuleError is one broken corpus rule: "file:line: rule: message". File is the path as the user
// gave it (under KNOWLEDGE_DIR, or knowledge/procedures for the embedded corpus), Line the line
// as the file counts it, from 1 (0 when the fault is the file or folder as a whole, which is then
// printed "file: rule: message"). Rule names the rule of docs/corpus.md; Msg says what is wrong
// in the user's words, never in the loader's.
type RuleError struct {
	File string
	Line int
	Rule string
	Msg  string
}

func (e *RuleError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Rule, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Rule, e.Msg)
}

// faults collects the RuleErrors of one file: each fault once, in line order.
type faults struct {
	file string
	errs []*RuleError
}

// add reports a broken rule at a line of the file (0: the whole file).
func (f *faults) add(line int, rule, format string, args ...any) {
	e := &RuleError{File: f.file, Line: line, Rule: rule, Msg: fmt.Sprintf(format, args...)}
	for _, old := range f.errs {
		if *old == *e {
			return
		}
	}
	f.errs = append(f.errs, e)
}

// at reports whether a fault is reported at line already.
func (f *faults) at(line int) bool {
	return slices.ContainsFunc(f.errs, func(e *RuleError) bool { return e.Line == line })
}

// err joins the faults, sorted by line (file-wide faults last), or returns nil.
func (f *faults) err() error {
	if len(f.errs) == 0 {
		return nil
	}
	sorted := slices.Clone(f.errs)
	slices.SortStableFunc(sorted, func(a, b *RuleError) int { return lineOrder(a.Line) - lineOrder(b.Line) })
	errs := make([]error, len(sorted))
	for i, e := range sorted {
		errs[i] = e
	}
	return errors.Join(errs...)
}

func lineOrder(line int) int {
	if line == 0 {
		return 1 << 30
	}
	return line
}

func ruleError(file string, line int, rule, format string, args ...any) error {
	return &RuleError{File: file, Line: line, Rule: rule, Msg: fmt.Sprintf(format, args...)}
}
