package domain

import "errors"

// ErrNotFound is returned for something that does not exist or has expired (a record, an
// invocation); the transport answers 404.
var ErrNotFound = errors.New("not found")
