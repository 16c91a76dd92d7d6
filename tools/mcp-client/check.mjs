// A client that is not the Go SDK: the official MCP TypeScript SDK's Client over Streamable HTTP,
// run by shared/app's TestMCPTypeScriptClient against the local API.
//
//   node check.mjs <base URL of the API> <plan as JSON>
//
// The plan: {"headers": {...}, "tools": [names], "calls": [{"tool", "arguments", "evidence_state"?,
// "error_code"?, "same_as"?, "offers"?, "basis"?}]}; "offers" is a procedure id the result's
// relevance.clarification must offer, "basis" the relevance.basis it must have (a confirmed
// follow-up's). The script initialises, lists the tools (which makes the client
// validate every later result's structuredContent against the tool's outputSchema, as the SDK
// does for every tool that has one), calls each tool of the plan and checks what the plan expects;
// "same_as" names an HTTP route (/lookup) whose body for the same arguments must equal the
// structured content, the ids of the call (invocation_id, correlation_id) aside. It asks for a
// resource subscription too, which a stateless server must refuse at once. It prints one JSON
// line of what it saw and exits 0, or prints why on stderr and exits 1.
import { isDeepStrictEqual } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

const base = process.argv[2];
const plan = JSON.parse(process.argv[3]);
const api = `${base}/api/v1/knowledge`;

function fail(msg) {
  process.stderr.write(`${msg}\n`);
  process.exit(1);
}

function withoutIds(v) {
  const { invocation_id: _i, correlation_id: _c, ...rest } = v;
  return rest;
}

const client = new Client({ name: 'mobilityops-ts-check', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(`${api}/mcp`), {
  requestInit: { headers: plan.headers },
});
await client.connect(transport);
const seen = { server: client.getServerVersion()?.name, protocol: transport.protocolVersion, tools: [], calls: [] };

const { tools } = await client.listTools();
seen.tools = tools.map((t) => t.name).sort();
if (!isDeepStrictEqual(seen.tools, [...plan.tools].sort())) {
  fail(`tools ${seen.tools}, want ${plan.tools}`);
}
for (const t of tools) {
  if (!t.inputSchema || !t.outputSchema) {
    fail(`tool ${t.name} has no input or output schema`);
  }
}

for (const c of plan.calls) {
  let res;
  try {
    // The SDK validates structuredContent against the tool's outputSchema here and throws
    // McpError -32602 when it does not match.
    res = await client.callTool({ name: c.tool, arguments: c.arguments });
  } catch (e) {
    fail(`${c.tool} ${JSON.stringify(c.arguments)}: ${e}`);
  }
  const got = { tool: c.tool, is_error: Boolean(res.isError) };
  if (c.error_code) {
    const body = res.isError ? JSON.parse(res.content[0].text) : null;
    if (!body || body.error.code !== c.error_code) {
      fail(`${c.tool} ${JSON.stringify(c.arguments)}: want tool error ${c.error_code}, got ${JSON.stringify(res)}`);
    }
    got.error_code = body.error.code;
    seen.calls.push(got);
    continue;
  }
  if (res.isError || !res.structuredContent) {
    fail(`${c.tool} ${JSON.stringify(c.arguments)}: ${JSON.stringify(res)}`);
  }
  got.validated = true;
  got.evidence_state = res.structuredContent.evidence_state;
  if (c.evidence_state && got.evidence_state !== c.evidence_state) {
    fail(`${c.tool} ${JSON.stringify(c.arguments)}: evidence_state ${got.evidence_state}, want ${c.evidence_state}`);
  }
  const rel = res.structuredContent.relevance;
  if (c.offers) {
    const options = rel?.clarification?.options ?? [];
    if (!options.some((o) => o.procedure === c.offers)) {
      fail(`${c.tool} ${JSON.stringify(c.arguments)}: no clarification offering ${c.offers}: ${JSON.stringify(rel)}`);
    }
    got.offers = c.offers;
  }
  if (c.basis && rel?.basis !== c.basis) {
    fail(`${c.tool} ${JSON.stringify(c.arguments)}: basis ${rel?.basis}, want ${c.basis}`);
  }
  if (c.same_as) {
    const r = await fetch(`${api}${c.same_as}`, {
      method: 'POST',
      headers: { ...plan.headers, 'Content-Type': 'application/json' },
      body: JSON.stringify(c.arguments),
    });
    const body = await r.json();
    if (r.status !== 200 || !isDeepStrictEqual(withoutIds(body), withoutIds(res.structuredContent))) {
      fail(`${c.tool}: structured content differs from POST ${c.same_as} (${r.status}):\n` +
        `${JSON.stringify(withoutIds(res.structuredContent))}\n${JSON.stringify(withoutIds(body))}`);
    }
    got.same_as = c.same_as;
  }
  seen.calls.push(got);
}

try {
  await client.subscribeResource({ uri: 'file:///procedures' });
  fail('resources/subscribe was served');
} catch (e) {
  if (!(e instanceof McpError) || e.code !== ErrorCode.MethodNotFound) {
    fail(`resources/subscribe: ${e}`);
  }
  seen.subscribe = e.code;
}

await client.close();
process.stdout.write(`${JSON.stringify(seen)}\n`);
