package store

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	appconfig "github.com/northstar-mobility/mobilityops-knowledge/shared/config"
)

// ClientOptions configure the DynamoDB client.
type ClientOptions struct {
	// Endpoint overrides the service endpoint (DynamoDB Local); empty means AWS.
	Endpoint string
	// Region is used when the environment names none (DynamoDB Local ignores it).
	Region string
	// MaxAttempts bounds the standard retryer's attempts (throttling and 5xx are retried).
	MaxAttempts int
	// HTTPTimeout bounds one HTTP request.
	HTTPTimeout time.Duration
	// Configure, when set, adjusts the loaded AWS configuration (tracing instrumentation).
	Configure func(*aws.Config)
}

// NewDynamoClient loads the SDK's default AWS configuration and builds the DynamoDB client on it
// (DynamoClientFrom): for tools and tests that have no configuration of their own.
func NewDynamoClient(ctx context.Context, o ClientOptions) (*dynamodb.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	if o.Configure != nil {
		o.Configure(&cfg)
	}
	return DynamoClientFrom(cfg, o), nil
}

// DynamoClientFrom builds the DynamoDB client on the function's AWS configuration, once per cold
// start: the SDK's standard retryer with bounded attempts and backoff, and an HTTP client with a
// timeout. With an endpoint override it signs with fixed local credentials, which DynamoDB Local
// accepts.
func DynamoClientFrom(cfg aws.Config, o ClientOptions) *dynamodb.Client {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3
	}
	if o.HTTPTimeout <= 0 {
		o.HTTPTimeout = time.Second
	}
	return dynamodb.NewFromConfig(cfg, func(do *dynamodb.Options) {
		do.Region = cmp.Or(do.Region, o.Region, appconfig.DefaultAWSRegion)
		do.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = o.MaxAttempts
			so.MaxBackoff = 500 * time.Millisecond
		})
		do.HTTPClient = awshttp.NewBuildableClient().WithTimeout(o.HTTPTimeout)
		if o.Endpoint != "" {
			do.Credentials = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider("local", "local", ""))
			do.BaseEndpoint = aws.String(o.Endpoint)
			// DynamoDB Local's CRC32 header does not match the bodies of its conditional-check
			// failures, and the SDK logs a warning for each; the real service is checked.
			do.DisableValidateResponseChecksum = true
		}
	})
}
