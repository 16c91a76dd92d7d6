// Package mcpwire builds the MCP endpoint of the lookup function. It is apart from package wire
// so that only the binary that serves /mcp links the MCP SDK.
package mcpwire

import (
	"log/slog"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/mcp"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/status"
)

// Version is the implementation version the MCP endpoint reports to clients.
const Version = "1.0.0"

// New is the MCP endpoint over the lookup service (lookup_knowledge, ask_knowledge) and the status
// service (knowledge_status); nil without a lookup service.
func New(svc *retrieval.Service, st *status.Service, log *slog.Logger) api.MCPServer {
	if svc == nil {
		return nil
	}
	return mcp.New(mcp.Services{Lookup: svc, Ask: svc, Status: st}, Version, log)
}
