//go:build !tune

package main

import "github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"

// options are the production settings the evaluation measures.
func options() retrieval.Options { return retrieval.DefaultOptions() }
