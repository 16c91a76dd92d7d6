module github.com/northstar-mobility/mobilityops-knowledge

go 1.26.0

require (
	github.com/aws/aws-lambda-go v1.55.1
	github.com/blevesearch/snowballstem v0.9.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/text v0.44.0
)
