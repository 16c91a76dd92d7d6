package status

import (
	"context"
	"sync"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// Component states of GET /health.
const (
	ComponentOK          = "ok"
	ComponentFailed      = "failed"
	ComponentCircuitOpen = "circuit_open"
)

// StoreProbe is implemented by a trace store that can tell cheaply whether it answers
// (store.Dynamo reads one absent item, store.Memory always answers).
type StoreProbe interface {
	Probe(ctx context.Context) error
}

// Defaults of the store probe.
const (
	// DefaultStoreProbeTimeout bounds one probe of the store.
	DefaultStoreProbeTimeout = 500 * time.Millisecond
	// DefaultStoreProbeTTL is how long a probe's result is reused, so that a burst of health
	// checks costs one read.
	DefaultStoreProbeTTL = 5 * time.Second
	// DefaultProviderProbeTTL is how long the provider's health result is reused, so that a
	// burst of health checks costs one provider call.
	DefaultProviderProbeTTL = 5 * time.Second
)

// probeCache is the last result of one health check (the store's or the provider's), reused for
// a TTL. Its bound is one entry, its key the check itself (the process's one store or provider,
// never a caller's input); a result older than the TTL is replaced by the next check.
type probeCache struct {
	mu        sync.Mutex
	at        time.Time
	component string
	ok        bool // a result is there
}

// cached returns the component state c holds when it is younger than ttl; otherwise it runs
// check once for every caller waiting at the time (single-flight under key) and keeps its result.
func (s *Service) cached(c *probeCache, key string, ttl time.Duration, check func() string) string {
	c.mu.Lock()
	if c.ok && s.now().Sub(c.at) < ttl {
		v := c.component
		c.mu.Unlock()
		return v
	}
	c.mu.Unlock()
	v, _, _ := s.flight.Do(key, func() (any, error) {
		component := check()
		c.mu.Lock()
		c.at, c.component, c.ok = s.now(), component, true
		c.mu.Unlock()
		return component, nil
	})
	return v.(string)
}

// CheckHealth checks the provider (its breaker first, then its Health within the request
// timeout) and the store (a probe within StoreProbeTimeout, reused for StoreProbeTTL), both at
// once, and says what they mean for lookups.
func (s *Service) CheckHealth(ctx context.Context, call port.Call) domain.Health {
	h := domain.Health{Provider: s.provider.Name(), Sidecar: s.SidecarHealth()}
	done := make(chan string, 1)
	go func() { done <- s.storeHealth(ctx) }()
	h.Components.Provider = s.providerHealth(ctx, call)
	h.Components.Store = <-done
	switch {
	case h.Components.Provider != ComponentOK && !s.l0Answers():
		h.Status = domain.HealthUnavailable
	case h.Components.Provider != ComponentOK || h.Components.Store != ComponentOK:
		h.Status = domain.HealthDegraded
	default:
		h.Status = domain.HealthOK
	}
	return h
}

// providerHealth is the provider's state: circuit_open while its breaker refuses calls, else
// its Health, reused for ProviderProbeTTL and shared by concurrent checks, so that however many
// probes arrive (GET /health is open to uptime probes without credentials) the provider sees
// at most one health call per interval.
func (s *Service) providerHealth(ctx context.Context, call port.Call) string {
	if b, ok := s.provider.(port.BreakerReporter); ok && b.BreakerOpen() {
		return ComponentCircuitOpen
	}
	return s.cached(&s.providerProbe, "provider-probe", s.opts.ProviderProbeTTL, func() string {
		if s.Health(context.WithoutCancel(ctx), call).Status != domain.HealthOK {
			return ComponentFailed
		}
		return ComponentOK
	})
}

// l0Answers reports whether procedures are loaded for L0 in some language: then a lookup
// answers even without its provider.
func (s *Service) l0Answers() bool {
	for _, lang := range knowledge.Languages {
		if len(s.sources(lang)) > 0 {
			return true
		}
	}
	return false
}

// storeHealth probes the store, or reuses a probe younger than StoreProbeTTL. Concurrent
// checks share one probe. A store that cannot be probed is taken to answer. A store whose
// circuit breaker is open (store.Guarded, after consecutive failed trace writes) has failed,
// without a probe: its traces go to the log.
func (s *Service) storeHealth(ctx context.Context) string {
	if b, ok := s.records.(port.BreakerReporter); ok && b.BreakerOpen() {
		return ComponentFailed
	}
	p, ok := s.records.(StoreProbe)
	if !ok {
		return ComponentOK
	}
	return s.cached(&s.storeProbe, "store-probe", s.opts.StoreProbeTTL, func() string {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.StoreProbeTimeout)
		defer cancel()
		err := p.Probe(pctx)
		failed := 0
		if err != nil {
			failed = 1
			s.log.WarnContext(ctx, "store probe failed", "error", port.SafeError(err))
		}
		if s.opts.Metrics != nil {
			s.opts.Metrics.Count("StoreHealthFailures", failed)
		}
		return componentOf(err)
	})
}

func componentOf(err error) string {
	if err != nil {
		return ComponentFailed
	}
	return ComponentOK
}
