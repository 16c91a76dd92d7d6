package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/app"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
)

// TestTemplateRoutesMatchTheHandler keeps template.yaml's API routes for LookupFunction and the
// handler's routes the same, and every environment variable the template sets a known setting.
func TestTemplateRoutesMatchTheHandler(t *testing.T) {
	root, err := ddblocal.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Globals struct {
			Function struct {
				Runtime       string   `yaml:"Runtime"`
				Architectures []string `yaml:"Architectures"`
				Tracing       string   `yaml:"Tracing"`
				Environment   struct {
					Variables map[string]yaml.Node `yaml:"Variables"`
				} `yaml:"Environment"`
			} `yaml:"Function"`
		} `yaml:"Globals"`
		Resources map[string]struct {
			Type       string `yaml:"Type"`
			Properties struct {
				Events map[string]struct {
					Type       string `yaml:"Type"`
					Properties struct {
						Method string `yaml:"Method"`
						Path   string `yaml:"Path"`
					} `yaml:"Properties"`
				} `yaml:"Events"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	g := tpl.Globals.Function
	if g.Runtime != "provided.al2023" || !slices.Equal(g.Architectures, []string{"arm64"}) || g.Tracing != "Active" {
		t.Errorf("globals %+v", g)
	}
	def, _ := config.FromEnv(func(string) string { return "" })
	a, err := app.New(context.Background(), def, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\{[a-z_]+\}`)
	catchAll := ""
	for logicalID, function := range map[string]string{"LookupFunction": app.FunctionLookup,
		"StatusFunction": app.FunctionStatus, "SyncFunction": app.FunctionSync} {
		var routes []string
		for _, ev := range tpl.Resources[logicalID].Properties.Events {
			if ev.Type == "HttpApi" && ev.Properties.Method == "ANY" && ev.Properties.Path == api.BasePath+"/{proxy+}" {
				catchAll = logicalID
				continue
			}
			if ev.Type == "HttpApi" {
				routes = append(routes, ev.Properties.Method+" "+param.ReplaceAllString(ev.Properties.Path, "{}"))
			}
		}
		want := a.FunctionHandler(function).Routes()
		slices.Sort(routes)
		slices.Sort(want)
		if len(want) == 0 || !slices.Equal(routes, want) {
			t.Errorf("%s: template routes %v, handler routes %v", logicalID, routes, want)
		}
	}
	if catchAll == "" {
		t.Error("no catch-all route: API Gateway would answer wrong methods and paths outside the contract")
	}
	// Every variable the template sets must be one the configuration reads: setting it changes
	// the configuration (or makes it invalid, which also changes it).
	for name := range g.Environment.Variables {
		got, _ := config.FromEnv(func(k string) string {
			if k == name {
				return "7"
			}
			return ""
		})
		if got == def {
			t.Errorf("template sets %s, which the configuration does not read", name)
		}
	}
}
