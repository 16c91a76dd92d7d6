package sidecar

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/service/bedrockagentruntime/types"
	"github.com/aws/smithy-go"
)

// classify maps an error of a Retrieve call made with ctx to an error class. Typed service errors
// come first, then the HTTP status of untyped ones, then transport and decoding failures.
func classify(ctx context.Context, err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(ctx.Err(), context.DeadlineExceeded):
		return ClassTimeout
	case errors.Is(ctx.Err(), context.Canceled):
		// Only the caller cancels: the sidecar's own deadline ends in DeadlineExceeded.
		return ClassCanceled
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return ClassTimeout // the HTTP client's own timeout
	}

	var (
		throttled *types.ThrottlingException
		denied    *types.AccessDeniedException
		notFound  *types.ResourceNotFoundException
		invalid   *types.ValidationException
		params    smithy.InvalidParamsError
		serialize *smithy.SerializationError
	)
	switch {
	case errors.As(err, &throttled):
		return ClassThrottled
	case errors.As(err, &denied):
		return ClassUnauthorized
	case errors.As(err, &notFound), errors.As(err, &invalid), errors.As(err, &params), errors.As(err, &serialize):
		return ClassInvalidConfig
	}

	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException",
			"IncompleteSignatureException", "MissingAuthenticationTokenException":
			return ClassUnauthorized
		}
	}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) {
		switch code := status.HTTPStatusCode(); {
		case code == http.StatusUnauthorized || code == http.StatusForbidden:
			return ClassUnauthorized
		case code == http.StatusTooManyRequests:
			return ClassThrottled
		case code >= 500:
			// A gateway's HTML error page is an outage, not a malformed answer.
			return ClassUnavailable
		}
	}
	var decode *smithy.DeserializationError
	if errors.As(err, &decode) {
		return ClassBadResponse
	}
	return ClassUnavailable
}
