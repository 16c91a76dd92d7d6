package eval

import (
	"fmt"
	"io"
	"strings"
)

// Row is one line of a table: a report and what it covers (a set or a group of sets, a language).
type Row struct {
	Name, Language string
	Report         Report
}

// Legend explains the columns of PrintTable.
const Legend = `columns, in % of the questions of each kind:
  ans    answerable questions (count)
  right  answerable, grounded, primary block of the expected procedure
  WRONG  answerable, grounded, primary block of another procedure
  named  of the answerable questions not grounded, those naming the expected procedure as primary or in relevance.alternatives
  fact3  the quoted deciding fact in one of the first 3 blocks
  top1   the expected procedure as primary block; top3: in one of the first 3 blocks
  sect1  the fact's section as primary block; ask: the fact in /ask's excerpts
  res1   answerable, resolved after at most one clarification: right, or the expected procedure among the
         clarification's options and the follow-up confirming it grounded, its fact in the first 3 blocks
  u-alt  off-topic and near-domain questions with alternatives or a clarification
  u-conf off-topic and near-domain questions grounded once their primary procedure is confirmed
  cmp1   single-need answerable questions naming a complement (relevance.complements)
  and, for the questions that need two procedures (multi-part sets): both procedures among the
  blocks (2proc), both deciding facts among them (2fact), the second procedure named as a complement (named2)
  near   near-domain questions grounded (of the count after /); off: off-topic questions grounded`

// PrintTable writes the rows as a table, one row a line, with the columns Legend explains; a
// figure without questions to count is "–".
func PrintTable(w io.Writer, rows []Row) {
	width := len("set")
	for _, r := range rows {
		width = max(width, len(r.Name))
	}
	pct := func(a, b int) string {
		if b == 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f", 100*float64(a)/float64(b))
	}
	of := func(a, b int) string {
		if b == 0 {
			return "–"
		}
		return fmt.Sprintf("%s /%d", pct(a, b), b)
	}
	line := func(cells ...string) {
		var b strings.Builder
		fmt.Fprintf(&b, "%-*s %-4s", width, cells[0], cells[1])
		for i, c := range cells[2:] {
			n := 6
			if i >= len(cells)-4 {
				n = 10 // near and off carry their counts
			}
			fmt.Fprintf(&b, " %*s", n, c)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line("set", "lang", "ans", "right", "WRONG", "named", "fact3", "top1", "top3", "sect1", "ask", "res1", "u-alt", "u-conf",
		"cmp1", "2proc", "2fact", "named2", "near", "off")
	for _, row := range rows {
		r := row.Report
		line(row.Name, row.Language, fmt.Sprint(r.InDomain), pct(r.RightGrounded, r.InDomain), pct(r.WrongGrounded, r.InDomain),
			pct(r.NotGroundedNamed, r.InDomain-r.Grounded), pct(r.FactTop3, r.WithFact), pct(r.Primary, r.InDomain),
			pct(r.Top3, r.InDomain), pct(r.SectionTop1, r.WithFact), pct(r.FactAsk, r.AskedFact), pct(r.Resolved, r.InDomain),
			pct(r.UnansweredOffered, r.OutOfDomain+r.NearDomain), pct(r.UnansweredConfirmedGrounded, r.UnansweredConfirmable),
			pct(r.SingleComplements, r.InDomain-r.MultiPart), pct(r.BothProcedures, r.MultiPart), pct(r.BothFacts, r.MultiPart),
			pct(r.ComplementNamed, r.MultiPart),
			of(r.NearDomain-r.NearDomainInsufficent, r.NearDomain), of(r.OutOfDomain-r.OODInsufficient, r.OutOfDomain))
	}
}
