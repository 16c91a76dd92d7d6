// Package secret reads secrets the deployed functions need, once per cold start. Today that is the
// RAGcore bearer token from an SSM SecureString parameter.
package secret

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

// ParameterReader is the part of the SSM client this package uses.
type ParameterReader interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, optFns ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

var _ ParameterReader = (*ssm.Client)(nil)

// Parameter returns the decrypted value of an SSM parameter, within timeout. Its error names the
// parameter, never the value.
func Parameter(ctx context.Context, r ParameterReader, name string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := r.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name), WithDecryption: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("read SSM parameter %s: %w", name, err)
	}
	if out.Parameter == nil || aws.ToString(out.Parameter.Value) == "" {
		return "", fmt.Errorf("read SSM parameter %s: %w", name, errors.New("empty value"))
	}
	return aws.ToString(out.Parameter.Value), nil
}
