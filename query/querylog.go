package query

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/array"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/flightsrv/flightsrv/internal/querylog"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/substrait"
)

// Statement kinds recorded in the call's query record (internal/querylog) and its log line:
// fixed words, never SQL text. A pushed-down aggregate adds its operation ("SELECT COUNT").
const (
	kindSelect    = "SELECT"
	kindExplain   = "EXPLAIN"
	kindSubstrait = "SUBSTRAIT"
)

// noteStatement records the kind of a prepared SQL statement (st) or of a Substrait plan (st
// nil) in ctx's query record.
func noteStatement(ctx context.Context, st *substrait.Statement) {
	rec := querylog.FromContext(ctx)
	switch {
	case st == nil:
		rec.SetStatement(kindSubstrait)
	case st.IsExplain():
		rec.SetStatement(kindExplain)
	default:
		rec.SetStatement(kindSelect)
	}
}

// noteUnprepared records the kind of SQL text that could not be prepared: its leading keyword
// as PostgreSQL's lexer reads it (SELECT, EXPLAIN, WITH, INSERT…), OTHER when it starts with no
// keyword, INVALID when the text cannot be lexed (or is too long, not UTF-8, holds a NUL).
func noteUnprepared(ctx context.Context, sql string) {
	rec := querylog.FromContext(ctx)
	if rec == nil {
		return
	}
	kind := "INVALID"
	if len(sql) <= substrait.MaxSQLBytes && utf8.ValidString(sql) && strings.IndexByte(sql, 0) < 0 {
		if res, err := pg.Scan(sql); err == nil {
			kind = "OTHER"
			for _, tok := range res.GetTokens() {
				if tok.GetToken() == pg.Token_SQL_COMMENT || tok.GetToken() == pg.Token_C_COMMENT {
					continue
				}
				if tok.GetKeywordKind() != pg.KeywordKind_NO_KEYWORD {
					kind = strings.ToUpper(sql[tok.GetStart():tok.GetEnd()])
				}
				break
			}
		}
	}
	rec.SetStatement(kind)
}

// withReads attaches a routing.ReadStats to ctx for the stores and archive readers to count
// into (unless ctx carries one already) and registers it in ctx's query record, whose span
// and log line report it when the call ends.
func withReads(ctx context.Context) context.Context {
	if routing.StatsFrom(ctx) != nil {
		return ctx
	}
	stats := &routing.ReadStats{}
	querylog.FromContext(ctx).SetReads(func() querylog.Reads {
		return querylog.Reads{BytesRead: stats.BytesRead.Load(), ObjectReads: stats.ObjectReads.Load(),
			HotStatements: stats.HotStatements.Load(), HotRows: stats.HotRows.Load(), ArchiveRows: stats.ArchiveRows.Load(),
			RowGroupsRead: stats.RowGroupsRead.Load(), RowGroupsPruned: stats.RowGroupsPruned.Load(),
			PagesRead: stats.PagesRead.Load(), PagesPruned: stats.PagesPruned.Load()}
	})
	return routing.WithReadStats(ctx, stats)
}

// noteExecution registers, in ctx's query record, how many buckets the query behind rdr read
// from each store (counted when the call ends).
func noteExecution(ctx context.Context, rdr array.RecordReader) {
	if r, ok := rdr.(*execReader); ok && r.res != nil {
		querylog.FromContext(ctx).SetBuckets(r.res.Tiers)
	}
}
