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
	Misses                            []string
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
	r.Misses = append(r.Misses, o.Misses...)
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

// Run asks every question through the lookup flow (and the ask flow when opts.Ask).
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
		got, gotSection := "-", "-"
		if res.Primary != nil {
			got, gotSection = res.Primary.DocumentID, res.Primary.Section
		}
		grounded := res.EvidenceState == port.StateGrounded
		switch q.Kind {
		case KindOffTopic, KindNearDomain:
			if q.Kind == KindOffTopic {
				r.OutOfDomain++
			} else {
				r.NearDomain++
			}
			if !grounded {
				if q.Kind == KindOffTopic {
					r.OODInsufficient++
				} else {
					r.NearDomainInsufficent++
				}
			} else {
				r.Misses = append(r.Misses, fmt.Sprintf("%s %s but grounded on %s (%s): %s", q.ID, q.Kind, got, res.Relevance.Reason, q.Question))
			}
			continue
		}
		r.InDomain++
		if got == q.Expect {
			r.Primary++
		}
		for i, b := range res.EvidenceBlocks {
			if i < 3 && b.DocumentID == q.Expect {
				r.Top3++
				break
			}
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
		note := ""
		if q.Fact != "" {
			r.WithFact++
			if got == q.Expect && gotSection == q.Section {
				r.SectionTop1++
			}
			inTop3 := false
			for i, b := range res.EvidenceBlocks {
				if i < 3 && b.DocumentID == q.Expect && strings.Contains(b.Content, q.Fact) {
					inTop3 = true
				}
			}
			if inTop3 {
				r.FactTop3++
			} else {
				note = "; fact not in the first 3 blocks"
			}
			if opts.Ask {
				r.AskedFact++
				ans, err := svc.Ask(ctx, lookup.AskRequest{Question: q.Question, Language: lang, Actor: port.Actor{ID: "eval"}})
				if err != nil {
					return r, fmt.Errorf("%s: ask: %w", q.ID, err)
				}
				for _, s := range ans.Sources {
					if s.DocumentID == q.Expect && strings.Contains(s.Excerpt, q.Fact) {
						r.FactAsk++
						break
					}
				}
			}
		}
		if got != q.Expect || !grounded || note != "" {
			tag := "not grounded"
			switch {
			case grounded && got != q.Expect:
				tag = "WRONG-GROUNDED"
			case grounded:
				tag = "grounded"
			}
			r.Misses = append(r.Misses, fmt.Sprintf("%s %s, want %s/%s, primary %s/%s%s%s (%s): %s", q.ID, tag, q.Expect, q.Section, got, gotSection,
				alternatives(res.Relevance.Alternatives), note, res.Relevance.Reason, q.Question))
		}
	}
	return r, nil
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
