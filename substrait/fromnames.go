package substrait

import pg "github.com/pganalyze/pg_query_go/v6"

// checkFromNames refuses a FROM list (or join) that names two items alike as PostgreSQL's
// checkNameSpaceConflicts does: 42712 table name "x" specified more than once. An item's name
// is its alias, else the table's or function's name; a join with an alias is named by it
// alone, one without by the names of its sides. Two tables without aliases in different
// schemas named explicitly do not conflict (they are different tables).
func checkFromNames(items []*pg.Node) error {
	if len(items) == 1 && items[0].GetJoinExpr() == nil {
		return nil
	}
	type entry struct{ schema string }
	seen := map[string]entry{}
	var walk func(n *pg.Node) error
	add := func(name, schema string) error {
		if name == "" {
			return nil
		}
		if prev, ok := seen[name]; ok {
			if prev.schema == "" || schema == "" || prev.schema == schema {
				return quoting(InvalidArgument, "42712", "table name %q specified more than once", name)
			}
		}
		seen[name] = entry{schema}
		return nil
	}
	walk = func(n *pg.Node) error {
		switch {
		case n.GetRangeVar() != nil:
			rv := n.GetRangeVar()
			if al := rv.GetAlias(); al != nil {
				return add(al.GetAliasname(), "")
			}
			return add(rv.GetRelname(), rv.GetSchemaname())
		case n.GetRangeSubselect() != nil:
			return add(n.GetRangeSubselect().GetAlias().GetAliasname(), "")
		case n.GetRangeFunction() != nil:
			rf := n.GetRangeFunction()
			if al := rf.GetAlias(); al != nil {
				return add(al.GetAliasname(), "")
			}
			if fs := rf.GetFunctions(); len(fs) == 1 && len(fs[0].GetList().GetItems()) > 0 {
				if fc := fs[0].GetList().GetItems()[0].GetFuncCall(); fc != nil {
					return add(funcName(fc), "")
				}
			}
		case n.GetJoinExpr() != nil:
			j := n.GetJoinExpr()
			if al := j.GetAlias(); al != nil {
				return add(al.GetAliasname(), "")
			}
			if err := walk(j.GetLarg()); err != nil {
				return err
			}
			return walk(j.GetRarg())
		}
		return nil
	}
	for _, it := range items {
		if err := walk(it); err != nil {
			return err
		}
	}
	return nil
}
