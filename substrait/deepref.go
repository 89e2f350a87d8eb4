package substrait

import (
	"errors"
	"fmt"
)

// noteDeepRef records the refusal to answer for a column reference qual.name that the scope
// of its query does not resolve (err, a name error) when it resolves in the scope of a query
// more than one level out: a correlated subquery is decorrelated against the query it stands
// in (decorrelate), so a reference past that query, from a subquery or a derived table inside
// a subquery, is not supported (PostgreSQL answers it). The refusal replaces a name error the
// statement fails with only (deepRefError): a reference that a rewrite resolves after all
// (decorrelateDomain turns outer references under nested subqueries into its domain's
// columns) still binds. A name error of a reference that does resolve one level out is
// recorded too (resolvable): decorrelation answers it, and when the statement fails with it,
// the failure is a deeper reference's.
func (bd *binder) noteDeepRef(qual, name string, err error) {
	var pe *Error
	if !errors.As(err, &pe) || (pe.SQLState != "42P01" && pe.SQLState != "42703") {
		return
	}
	for i := len(bd.enclosing) - 1; i >= 0; i-- {
		e := bd.enclosing[i]
		if _, lerr := e.sc.lookup(qual, name); lerr != nil {
			continue
		}
		if bd.resolvable == nil {
			bd.resolvable, bd.deepRefs = map[string]bool{}, map[string]*Error{}
		}
		if e.level >= bd.level {
			bd.resolvable[pe.Msg] = true // the query the subquery stands in: decorrelate's
			return
		}
		if _, ok := bd.deepRefs[pe.Msg]; ok {
			return
		}
		ref := name
		if qual != "" {
			ref = qual + "." + name
		}
		r := quoting(Unimplemented, "0A000", fmt.Sprintf("correlated references to a query %d levels out (column %%q, read from a subquery or derived table inside a subquery) are not supported", bd.level-e.level+1), ref)
		bd.deepRefs[pe.Msg] = r
		if bd.firstDeepRef == nil {
			bd.firstDeepRef = r
		}
		return
	}
}

// deepRefError is err, the statement's binding error, or the refusal noteWholeRow or
// noteDeepRef recorded for the reference err is about (or, when err is about a reference that
// resolves one level out, for the first reference past that).
func (bd *binder) deepRefError(err error) error {
	var pe *Error
	if errors.As(err, &pe) && (pe.SQLState == "42P01" || pe.SQLState == "42703") {
		if r, ok := bd.wholeRows[pe.Msg]; ok {
			return r
		}
		if r, ok := bd.deepRefs[pe.Msg]; ok {
			return r
		}
		if bd.resolvable[pe.Msg] && bd.firstDeepRef != nil {
			return bd.firstDeepRef
		}
	}
	return err
}
