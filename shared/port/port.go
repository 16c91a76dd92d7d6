// Package port is the knowledge provider's contract: the small interfaces a provider implements
// (retrieve, answer, sync a manifest, health, verify), the shapes that cross them (a query and
// its candidates, an ask and its grounded answer, a manifest and its result), whom a call is made
// for (Actor, Call), and the errors and error classes a provider reports. The lookup service,
// the status and sync services and the providers (demo, RAGcore) import it; none of them imports
// another for these. Each consumer asks only for the interfaces it uses.
//
// It sits beside package domain, which holds the transport's and the records' shapes (the
// /status and /health bodies, a sync run, a sync report): a provider adapter needs the port and
// nothing of the services behind it.
package port
