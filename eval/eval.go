// Package eval measures retrieval quality on operator questions: how often the right procedure is
// the primary block and in the top three, and how often out-of-domain questions stay
// insufficient. The question sets are YAML files in this folder.
package eval

import (
	"context"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
)

// Question is one evaluation question; Expect is a procedure id or "none" (out of domain).
type Question struct {
	ID       string `yaml:"id"`
	Language string `yaml:"language"`
	Question string `yaml:"question"`
	Expect   string `yaml:"expect"`
}

// Load reads a question set.
func Load(path string) ([]Question, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var qs []Question
	if err := yaml.Unmarshal(raw, &qs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return qs, nil
}

// Report is the outcome of a run.
type Report struct {
	InDomain, Primary, Top3, Grounded int
	OutOfDomain, OODInsufficient      int
	Misses                            []string
}

// PrimaryRate is the share of in-domain questions whose primary block is the right procedure.
func (r Report) PrimaryRate() float64 { return ratio(r.Primary, r.InDomain) }

// Top3Rate is the share of in-domain questions with the right procedure in the top 3 blocks.
func (r Report) Top3Rate() float64 { return ratio(r.Top3, r.InDomain) }

// OODRate is the share of out-of-domain questions answered insufficient (or unavailable).
func (r Report) OODRate() float64 { return ratio(r.OODInsufficient, r.OutOfDomain) }

// GroundedRate is the share of in-domain questions answered grounded.
func (r Report) GroundedRate() float64 { return ratio(r.Grounded, r.InDomain) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Run asks every question through the lookup flow.
func Run(ctx context.Context, svc *retrieval.Service, qs []Question) (Report, error) {
	var r Report
	for _, q := range qs {
		res, err := svc.Lookup(ctx, retrieval.LookupRequest{Question: q.Question, Language: q.Language, TopK: 5,
			Actor: retrieval.Actor{ID: "eval"}})
		if err != nil {
			return r, fmt.Errorf("%s: %w", q.ID, err)
		}
		got := "-"
		if res.Primary != nil {
			got = res.Primary.DocumentID
		}
		if q.Expect == "none" {
			r.OutOfDomain++
			if res.EvidenceState != retrieval.StateGrounded {
				r.OODInsufficient++
			} else {
				r.Misses = append(r.Misses, fmt.Sprintf("%s out-of-domain but grounded on %s (coverage %.2f): %s", q.ID, got, res.Relevance.Coverage, q.Question))
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
		if res.EvidenceState == retrieval.StateGrounded {
			r.Grounded++
		}
		if got != q.Expect {
			r.Misses = append(r.Misses, fmt.Sprintf("%s want %s got %s [%s cov %.2f]: %s", q.ID, q.Expect, got, res.EvidenceState, res.Relevance.Coverage, q.Question))
		}
	}
	return r, nil
}

// Print writes the report.
func (r Report) Print(w io.Writer, name string) {
	fmt.Fprintf(w, "%s: primary %d/%d (%.1f %%), top-3 %d/%d (%.1f %%), grounded %d/%d (%.1f %%), out-of-domain insufficient %d/%d (%.1f %%)\n",
		name, r.Primary, r.InDomain, 100*r.PrimaryRate(), r.Top3, r.InDomain, 100*r.Top3Rate(),
		r.Grounded, r.InDomain, 100*r.GroundedRate(), r.OODInsufficient, r.OutOfDomain, 100*r.OODRate())
}
