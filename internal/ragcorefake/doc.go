// Package ragcorefake is an in-memory fake of the RAGcore v1 HTTP service, written to the
// contract in docs/ragcore.md, for tests (mount it with httptest.NewServer) and for local
// runs (cmd/ragcore-fake). The client under test must not be able to tell it from RAGcore, so the
// fake is strict where the contract is strict and injects the failures the contract names:
// error statuses, non-JSON bodies, delays and timeouts (see Faults).
//
// Where the contract is silent the fake does the plain thing, decided here:
//
//   - Order of checks on every request: the request is logged; Authorization must equal
//     "Bearer <token>" exactly (401; a server built with an empty token rejects everything); the
//     path and method must name an endpoint (404); the five identity headers
//     must be present and non-blank (400), also on /v1/health, because the contract says "every
//     request"; tenant and workspace must be this server's (403); a body over 1 MiB is
//     400 payload_too_large; a POST or PUT body must be sent as application/json (else 400
//     unsupported_media_type) and be one JSON object with exactly
//     the contract's field names, case-sensitive, and no others (400). Faults apply only after
//     all of that, so a bad request stays a bad request whatever faults are set.
//   - Error bodies are always {"error":{"code","message"}}, and every status is one of the
//     contract's list (400, 401, 403, 404, 409, 429, 500, 503), so no 405, 413 or 415. 409 is listed
//     by the contract but no endpoint defines when it happens, so the fake sends it only as an
//     injected fault.
//   - A 429 always carries Retry-After (Faults.RetryAfter, else "1").
//   - published_at is omitted while a version is not published.
//   - The collection in a request body is a filter, not a permission: retrieve and answer over a
//     collection that holds nothing return no candidates, and an upload to another collection
//     creates a document there, which the identity lookup then reports with that collection.
//   - Retrieval reads passages only. Document and version statuses change what the identity
//     lookup reports, not what is retrievable; Remove and MoveToNamespace move or drop the
//     passages as well, because they change where the document lives.
//   - Scores are rounded to four decimals before anything else uses them, so the order, the
//     "score > 0" cut and the 0.2 grounding threshold all agree with the scores a client sees.
//     Ties are broken by source_id, external_id, section, then document_id.
//   - A passage's text for scoring is title, section heading and content; words are runs of
//     Unicode letters and digits, lower-cased.
//   - An answer cites the top three passages with a positive score, whatever their source_id;
//     its sentence is English unless the request's language is "de".
//   - An upload whose document (same identity, tenant, workspace, collection) is active with the
//     same version published is "unchanged" whatever the content; otherwise the first such
//     document is updated (and reactivated) or a new one is created. The 202 body always says
//     "processing", as the contract does, even when PublishUploads publishes at once. Markdown
//     without "## " headings becomes one passage with an empty section.
package ragcorefake
