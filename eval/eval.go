// Package eval measures retrieval quality on operator questions: how often the right procedure is
// the primary block and in the first three, how often the block holding the deciding fact is among
// the first three and in /ask's excerpts, how often answerable questions come back grounded, and
// how often off-topic and near-domain questions do not. The question sets are YAML files in this
// folder; semantic.go is the scripted RAGcore stand-in that measures the semantic path.
package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
)

// Kinds of question.
const (
	KindAnswerable = "answerable"
	KindOffTopic   = "off-topic"
	KindNearDomain = "near-domain"
)

// Question is one evaluation question. Expect is a procedure id, or "none" for a question no
// procedure answers. Section and Fact, when set, name the section holding the deciding fact and
// quote that fact verbatim. Kind is answerable, off-topic or near-domain (default: answerable
// unless Expect is none, then off-topic).
type Question struct {
	ID       string `yaml:"id"`
	Language string `yaml:"language"`
	Question string `yaml:"question"`
	Expect   string `yaml:"expect"`
	Section  string `yaml:"section"`
	Fact     string `yaml:"fact"`
	Kind     string `yaml:"kind"`
	// Expect2, Section2 and Fact2 name the second need of a question that needs two procedures
	// (the multi-part sets), as Expect, Section and Fact name the first.
	Expect2  string `yaml:"expect2"`
	Section2 string `yaml:"section2"`
	Fact2    string `yaml:"fact2"`
}

// LoadDir reads every question set in dir (its *.yaml files), in file and set order.
func LoadDir(dir string) ([]Question, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no evaluation sets in %s", dir)
	}
	var all []Question
	for _, f := range files {
		qs, err := Load(f)
		if err != nil {
			return nil, err
		}
		all = append(all, qs...)
	}
	return all, nil
}

// Load reads a question set.
func Load(path string) ([]Question, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var qs []Question
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&qs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i := range qs {
		q := &qs[i]
		if q.Kind == "" {
			q.Kind = KindAnswerable
			if q.Expect == "none" {
				q.Kind = KindOffTopic
			}
		}
		switch {
		case q.Kind == KindAnswerable && (q.Expect == "" || q.Expect == "none"):
			return nil, fmt.Errorf("%s: %s: an answerable question needs expect", path, q.ID)
		case q.Kind != KindAnswerable && q.Kind != KindOffTopic && q.Kind != KindNearDomain:
			return nil, fmt.Errorf("%s: %s: unknown kind %q", path, q.ID, q.Kind)
		case q.Kind != KindAnswerable && q.Expect != "none":
			return nil, fmt.Errorf("%s: %s: a %s question expects none", path, q.ID, q.Kind)
		}
	}
	return qs, nil
}

// Report is the outcome of a run.
type Report struct {
	InDomain, Primary, Top3, Grounded int
	// RightGrounded and WrongGrounded split Grounded by the primary block's procedure: the one
	// the set expects, or another. NotGroundedNamed counts the answerable questions not
	// grounded whose primary block or relevance.alternatives name the expected procedure.
	RightGrounded, WrongGrounded, NotGroundedNamed int
	// WithFact counts answerable questions with a quoted fact; FactTop3 those whose fact is in
	// one of the first three blocks; FactAsk those whose fact is in one of /ask's excerpts
	// (counted only when the run asks, over AskedFact questions).
	WithFact, FactTop3, FactAsk, AskedFact int
	// SectionTop1 counts answerable questions with a section whose primary block is that section.
	SectionTop1                       int
	OutOfDomain, OODInsufficient      int
	NearDomain, NearDomainInsufficent int
	// Clarified counts the answerable questions not grounded whose answer offers a
	// clarification; Resolved those resolved after at most one (see clarifyingTurn).
	Clarified, Resolved int
	// UnansweredOffered counts the off-topic and near-domain questions whose answer names
	// alternatives or offers a clarification; UnansweredConfirmedGrounded those grounded once
	// their primary block's procedure is confirmed, of UnansweredConfirmable (those with one).
	UnansweredOffered, UnansweredConfirmable, UnansweredConfirmedGrounded int
	// MultiPart counts the answerable questions that need two procedures (Expect2); of them,
	// BothProcedures those with both procedures among the blocks, BothFacts those with both
	// deciding facts among the blocks, ComplementNamed those naming the procedure that is not
	// the primary's in relevance.complements. SingleComplements counts the single-need
	// answerable questions that name a complement.
	MultiPart, BothProcedures, BothFacts, ComplementNamed, SingleComplements int
	Misses                                                                   []string
}

// PrimaryRate is the share of in-domain questions whose primary block is the right procedure.
func (r Report) PrimaryRate() float64 { return ratio(r.Primary, r.InDomain) }

// Top3Rate is the share of in-domain questions with the right procedure in the top 3 blocks.
func (r Report) Top3Rate() float64 { return ratio(r.Top3, r.InDomain) }

// OODRate is the share of off-topic questions not answered grounded.
func (r Report) OODRate() float64 { return ratio(r.OODInsufficient, r.OutOfDomain) }

// NearDomainRate is the share of near-domain questions not answered grounded.
func (r Report) NearDomainRate() float64 { return ratio(r.NearDomainInsufficent, r.NearDomain) }

// GroundedRate is the share of in-domain questions answered grounded.
func (r Report) GroundedRate() float64 { return ratio(r.Grounded, r.InDomain) }

// RightGroundedRate is the share of in-domain questions grounded on the expected procedure.
func (r Report) RightGroundedRate() float64 { return ratio(r.RightGrounded, r.InDomain) }

// WrongGroundedRate is the share of in-domain questions grounded on another procedure.
func (r Report) WrongGroundedRate() float64 { return ratio(r.WrongGrounded, r.InDomain) }

// NamedRate is the share of the in-domain questions not grounded whose primary block or
// relevance.alternatives name the expected procedure.
func (r Report) NamedRate() float64 { return ratio(r.NotGroundedNamed, r.InDomain-r.Grounded) }

// OffTopicGroundedRate is the share of off-topic questions answered grounded.
func (r Report) OffTopicGroundedRate() float64 {
	return ratio(r.OutOfDomain-r.OODInsufficient, r.OutOfDomain)
}

// NearDomainGroundedRate is the share of near-domain questions answered grounded.
func (r Report) NearDomainGroundedRate() float64 {
	return ratio(r.NearDomain-r.NearDomainInsufficent, r.NearDomain)
}

// Add pools another report into r, as one run over both question lists.
func (r *Report) Add(o Report) {
	r.InDomain += o.InDomain
	r.Primary += o.Primary
	r.Top3 += o.Top3
	r.Grounded += o.Grounded
	r.RightGrounded += o.RightGrounded
	r.WrongGrounded += o.WrongGrounded
	r.NotGroundedNamed += o.NotGroundedNamed
	r.WithFact += o.WithFact
	r.FactTop3 += o.FactTop3
	r.FactAsk += o.FactAsk
	r.AskedFact += o.AskedFact
	r.SectionTop1 += o.SectionTop1
	r.OutOfDomain += o.OutOfDomain
	r.OODInsufficient += o.OODInsufficient
	r.NearDomain += o.NearDomain
	r.NearDomainInsufficent += o.NearDomainInsufficent
	r.Clarified += o.Clarified
	r.Resolved += o.Resolved
	r.UnansweredOffered += o.UnansweredOffered
	r.UnansweredConfirmable += o.UnansweredConfirmable
	r.UnansweredConfirmedGrounded += o.UnansweredConfirmedGrounded
	r.MultiPart += o.MultiPart
	r.BothProcedures += o.BothProcedures
	r.BothFacts += o.BothFacts
	r.ComplementNamed += o.ComplementNamed
	r.SingleComplements += o.SingleComplements
	r.Misses = append(r.Misses, o.Misses...)
}

// SingleComplementRate is the share of single-need answerable questions naming a complement.
func (r Report) SingleComplementRate() float64 {
	return ratio(r.SingleComplements, r.InDomain-r.MultiPart)
}

// BothProceduresRate is the share of the multi-part questions with both procedures among the
// blocks; BothFactsRate with both deciding facts; ComplementNamedRate naming the other procedure
// as a complement.
func (r Report) BothProceduresRate() float64 { return ratio(r.BothProcedures, r.MultiPart) }

func (r Report) BothFactsRate() float64 { return ratio(r.BothFacts, r.MultiPart) }

func (r Report) ComplementNamedRate() float64 { return ratio(r.ComplementNamed, r.MultiPart) }

// ResolvedRate is the share of in-domain questions resolved after at most one clarification.
func (r Report) ResolvedRate() float64 { return ratio(r.Resolved, r.InDomain) }

// UnansweredOfferedRate is the share of off-topic and near-domain questions offered alternatives
// or a clarification.
func (r Report) UnansweredOfferedRate() float64 {
	return ratio(r.UnansweredOffered, r.OutOfDomain+r.NearDomain)
}

// UnansweredConfirmedRate is the share of off-topic and near-domain questions with a primary
// block grounded once its procedure is confirmed.
func (r Report) UnansweredConfirmedRate() float64 {
	return ratio(r.UnansweredConfirmedGrounded, r.UnansweredConfirmable)
}

// FactTop3Rate is the share of questions with a quoted fact whose fact is in the first 3 blocks.
func (r Report) FactTop3Rate() float64 { return ratio(r.FactTop3, r.WithFact) }

// FactAskRate is the share of the questions with a quoted fact asked through /ask whose fact is
// in its excerpts.
func (r Report) FactAskRate() float64 { return ratio(r.FactAsk, r.AskedFact) }

// SectionRate is the share of questions with a section whose primary block is that section.
func (r Report) SectionRate() float64 { return ratio(r.SectionTop1, r.WithFact) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Options shape a run.
type Options struct {
	// NoLanguage sends every question without its language, as a client that leaves the field
	// out does; Detect then stands in for the API's detection.
	NoLanguage bool
	Detect     func(question string) string
	// Ask also asks every answerable question with a fact and checks /ask's excerpts.
	Ask bool
}

// Run asks every question through the lookup flow (and the ask flow when opts.Ask), and runs the
// clarifying turn where an answer offers one: the follow-up lookup with the expected procedure
// confirmed, as an agent sends it once the operator has chosen.
func Run(ctx context.Context, svc *retrieval.Service, qs []Question, opts Options) (Report, error) {
	var r Report
	for _, q := range qs {
		lang := q.Language
		if opts.NoLanguage && opts.Detect != nil {
			lang = opts.Detect(q.Question)
		}
		res, err := svc.Lookup(ctx, lookup.LookupRequest{Question: q.Question, Language: lang, TopK: 5,
			Actor: port.Actor{ID: "eval"}})
		if err != nil {
			return r, fmt.Errorf("%s: %w", q.ID, err)
		}
		t := turn{svc: svc, q: q, lang: lang, res: res}
		if q.Kind == KindOffTopic || q.Kind == KindNearDomain {
			err = r.unanswerable(ctx, t)
		} else {
			err = r.answerable(ctx, t, opts)
		}
		if err != nil {
			return r, fmt.Errorf("%s: %w", q.ID, err)
		}
	}
	return r, nil
}

// turn is one question's first lookup.
type turn struct {
	svc  *retrieval.Service
	q    Question
	lang string
	res  lookup.Result
}

// primary is the primary block's procedure and section, "-" for none.
func (t turn) primary() (doc, section string) {
	if t.res.Primary == nil {
		return "-", "-"
	}
	return t.res.Primary.DocumentID, t.res.Primary.Section
}

// confirmed is the follow-up lookup with doc confirmed.
func (t turn) confirmed(ctx context.Context, doc string) (lookup.Result, error) {
	return t.svc.Lookup(ctx, lookup.LookupRequest{Question: t.q.Question, Language: t.lang, TopK: 5, Procedure: doc,
		Actor: port.Actor{ID: "eval"}})
}

// unanswerable counts an off-topic or near-domain question: grounded or not, offered a choice
// (alternatives or a clarification) or not, and grounded once its primary procedure is confirmed.
func (r *Report) unanswerable(ctx context.Context, t turn) error {
	q, res := t.q, t.res
	got, _ := t.primary()
	grounded := res.EvidenceState == port.StateGrounded
	if q.Kind == KindOffTopic {
		r.OutOfDomain++
	} else {
		r.NearDomain++
	}
	switch {
	case grounded:
		r.Misses = append(r.Misses, fmt.Sprintf("%s %s but grounded on %s (%s): %s", q.ID, q.Kind, got, res.Relevance.Reason, q.Question))
	case q.Kind == KindOffTopic:
		r.OODInsufficient++
	default:
		r.NearDomainInsufficent++
	}
	if len(res.Relevance.Alternatives) > 0 || res.Relevance.Clarification != nil {
		r.UnansweredOffered++
		r.Misses = append(r.Misses, fmt.Sprintf("%s %s offered %s: %s", q.ID, q.Kind, clarified(res.Relevance.Clarification), q.Question))
	}
	if res.Primary == nil {
		return nil
	}
	r.UnansweredConfirmable++
	conf, err := t.confirmed(ctx, got)
	if err != nil {
		return err
	}
	if conf.EvidenceState == port.StateGrounded {
		r.UnansweredConfirmedGrounded++
		r.Misses = append(r.Misses, fmt.Sprintf("%s %s grounded once %s is confirmed (%s): %s", q.ID, q.Kind, got, conf.Relevance.Reason, q.Question))
	}
	return nil
}

// answerable counts an answerable question: its verdict, its blocks, its facts, and whether one
// clarification resolves it.
func (r *Report) answerable(ctx context.Context, t turn, opts Options) error {
	q, res := t.q, t.res
	got, gotSection := t.primary()
	grounded := res.EvidenceState == port.StateGrounded
	r.InDomain++
	if q.Expect2 != "" && got == q.Expect2 {
		// A question that needs two procedures is answered by either first.
		q.Expect, q.Expect2, q.Section, q.Section2, q.Fact, q.Fact2 = q.Expect2, q.Expect, q.Section2, q.Section, q.Fact2, q.Fact
		t.q = q
	}
	if got == q.Expect {
		r.Primary++
	}
	if inFirst(res.EvidenceBlocks, 3, q.Expect, "") {
		r.Top3++
	}
	named := got == q.Expect
	for _, a := range res.Relevance.Alternatives {
		named = named || a.DocumentID == q.Expect
	}
	switch {
	case grounded && got == q.Expect:
		r.Grounded++
		r.RightGrounded++
	case grounded:
		r.Grounded++
		r.WrongGrounded++
	case named:
		r.NotGroundedNamed++
	}
	r.parts(t)
	resolved, why, err := r.clarifyingTurn(ctx, t)
	if err != nil {
		return err
	}
	note := ""
	if q.Fact != "" {
		if note, err = r.fact(ctx, t, opts, got == q.Expect && gotSection == q.Section); err != nil {
			return err
		}
	}
	if !resolved {
		note += "; not resolved after one clarification: " + why
	}
	if got != q.Expect || !grounded || note != "" {
		tag := "not grounded"
		switch {
		case grounded && got != q.Expect:
			tag = "WRONG-GROUNDED"
		case grounded:
			tag = "grounded"
		}
		r.Misses = append(r.Misses, fmt.Sprintf("%s %s, want %s/%s, primary %s/%s%s%s%s (%s): %s", q.ID, tag, q.Expect, q.Section, got, gotSection,
			alternatives(res.Relevance.Alternatives), clarified(res.Relevance.Clarification), note, res.Relevance.Reason, q.Question))
	}
	return nil
}

// parts counts what the blocks hold of a question's needs: for one that needs two procedures,
// both among the blocks, both deciding facts, and the other named as a complement; for one
// that needs one, whether a complement is named all the same.
func (r *Report) parts(t turn) {
	q, res := t.q, t.res
	if q.Expect2 == "" {
		if len(res.Relevance.Complements) > 0 {
			r.SingleComplements++
		}
		return
	}
	r.MultiPart++
	blocks := res.EvidenceBlocks[:min(len(res.EvidenceBlocks), res.Retrieval.FinalBlockCount)]
	if inFirst(blocks, len(blocks), q.Expect, "") && inFirst(blocks, len(blocks), q.Expect2, "") {
		r.BothProcedures++
	}
	if inFirst(blocks, len(blocks), q.Expect, q.Fact) && inFirst(blocks, len(blocks), q.Expect2, q.Fact2) {
		r.BothFacts++
	}
	other := q.Expect2
	if res.Primary != nil && res.Primary.DocumentID == q.Expect2 {
		other = q.Expect
	}
	if slices.ContainsFunc(res.Relevance.Complements, func(c lookup.Complement) bool { return c.DocumentID == other }) {
		r.ComplementNamed++
	}
}

// clarifyingTurn counts an answerable question resolved after at most one clarification: grounded
// on the expected procedure, or offering it among the clarification's options with the follow-up
// that confirms it grounded on it, its deciding fact (when the set quotes one) in the first 3 blocks.
func (r *Report) clarifyingTurn(ctx context.Context, t turn) (bool, string, error) {
	q, res := t.q, t.res
	if res.EvidenceState == port.StateGrounded {
		if res.Primary.DocumentID == q.Expect {
			r.Resolved++
			return true, "", nil
		}
		return false, "grounded on another procedure", nil
	}
	c := res.Relevance.Clarification
	if c == nil {
		return false, "no clarification", nil
	}
	r.Clarified++
	if !slices.ContainsFunc(c.Options, func(o lookup.Option) bool { return o.Procedure == q.Expect }) {
		return false, "the expected procedure is not an option", nil
	}
	conf, err := t.confirmed(ctx, q.Expect)
	if err != nil {
		return false, "", err
	}
	switch {
	case conf.EvidenceState != port.StateGrounded:
		return false, "the confirmed follow-up is " + string(conf.EvidenceState) + " (" + conf.Relevance.Reason + ")", nil
	case q.Fact != "" && !inFirst(conf.EvidenceBlocks, 3, q.Expect, q.Fact):
		return false, "the confirmed follow-up has the fact outside the first 3 blocks", nil
	}
	r.Resolved++
	return true, "", nil
}

// fact counts where the question's deciding fact is: in the first 3 blocks, in the primary's
// section (sectionFirst), in /ask's excerpts; it returns a note for the misses list.
func (r *Report) fact(ctx context.Context, t turn, opts Options, sectionFirst bool) (string, error) {
	q := t.q
	r.WithFact++
	if sectionFirst {
		r.SectionTop1++
	}
	note := ""
	if inFirst(t.res.EvidenceBlocks, 3, q.Expect, q.Fact) {
		r.FactTop3++
	} else {
		note = "; fact not in the first 3 blocks"
	}
	if !opts.Ask {
		return note, nil
	}
	r.AskedFact++
	ans, err := t.svc.Ask(ctx, lookup.AskRequest{Question: q.Question, Language: t.lang, Actor: port.Actor{ID: "eval"}})
	if err != nil {
		return note, fmt.Errorf("ask: %w", err)
	}
	for _, s := range ans.Sources {
		if s.DocumentID == q.Expect && strings.Contains(s.Excerpt, q.Fact) {
			r.FactAsk++
			break
		}
	}
	return note, nil
}

// inFirst reports whether one of the first n blocks is of procedure doc and holds fact ("" for any).
func inFirst(blocks []lookup.EvidenceBlock, n int, doc, fact string) bool {
	for i, b := range blocks {
		if i < n && b.DocumentID == doc && strings.Contains(b.Content, fact) {
			return true
		}
	}
	return false
}

// clarified lists a clarification's options, "" for none.
func clarified(c *lookup.Clarification) string {
	if c == nil {
		return ""
	}
	ids := make([]string, len(c.Options))
	for i, o := range c.Options {
		ids[i] = o.Procedure
	}
	return ", clarification " + strings.Join(ids, "|")
}

// alternatives lists a result's alternatives with the paths favouring each, "" for none.
func alternatives(as []lookup.Alternative) string {
	if len(as) == 0 {
		return ""
	}
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.DocumentID + " (" + strings.Join(a.FavouredBy, "+") + ")"
	}
	return ", alternatives " + strings.Join(parts, ", ")
}

// ByLanguage splits a set by language, in the order the languages first appear.
func ByLanguage(qs []Question) (langs []string, by map[string][]Question) {
	by = map[string][]Question{}
	for _, q := range qs {
		if _, ok := by[q.Language]; !ok {
			langs = append(langs, q.Language)
		}
		by[q.Language] = append(by[q.Language], q)
	}
	return langs, by
}
