package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
)

// BenchmarkLookupRoute measures POST /lookup through the Lambda adapter (the event's body
// checked and decoded, the question validated, the lookup on the demo provider, the trace to
// the in-memory store, the response encoded): a typical question beside the questions that NFKC
// normalisation lengthens, the refused 2,000 × U+FDFA (36,000 characters normalised) and
// one that normalises to exactly the 2,000-character limit, in the same run.
func BenchmarkLookupRoute(b *testing.B) {
	h, _ := newHandler(b, api.AuthJWT)
	for _, q := range []struct {
		name, question string
		status         int
	}{
		{"typical-en", "A customer found a deep scratch on the rear door before the trip. What do we do?", 200},
		{"typical-de", "Akku unter 10 Prozent, Kunde steht an der Ladesäule und das Ladekabel steckt fest", 200},
		{"fdfa-2000-refused", strings.Repeat("\ufdfa", 2000), 400},
		{"fdfa-at-limit", strings.Repeat("\ufdfa", 111) + "ab", 200},
	} {
		body, _ := json.Marshal(map[string]any{"question": q.question, "language": "en", "top_k": 5})
		if strings.HasSuffix(q.name, "-de") {
			body, _ = json.Marshal(map[string]any{"question": q.question, "language": "de", "top_k": 5})
		}
		ev := event("POST", "/api/v1/knowledge/lookup", string(body), reader, nil)
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := h.Lambda(context.Background(), ev)
				if err != nil || resp.StatusCode != q.status {
					b.Fatalf("status %d, want %d: %v %s", resp.StatusCode, q.status, err, resp.Body)
				}
			}
		})
	}
}
