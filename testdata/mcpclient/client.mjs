// client.mjs — drives an MCP server with the official TypeScript SDK, so that
// PIRCAN's MCP face is tested by a client it did not write (internal/mcpclient
// runs it; see testdata/README.md).
//
// Env: PIRCAN_MCP_URL (the streamable HTTP endpoint), PIRCAN_MCP_TOKEN (sent
// as "Authorization: Bearer <token>"; none when empty).
// Stdin: a JSON array of steps:
//   {"op":"list_tools"}
//   {"op":"call","tool":"name","args":{...}}
//   {"op":"raw","method":"name","params":{...}}   any JSON-RPC request
//   {"op":"connect_expect_fail"}                   first step only
// Stdout: one JSON line per step, {"ok":true,"result":<the SDK's result>} or
// {"ok":false,"error":{"code","message","http_status"?,"data"?}}. A tool's
// refusal (isError: true) is a result like any other.
// Exit: 0 once every step has its line; 2 on a bad plan; 3 when connecting
// fails unexpectedly; 4 on any other harness failure (stderr says why).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { inspect } from 'node:util';

class HarnessError extends Error {
	constructor(exitCode, message) {
		super(message);
		this.exitCode = exitCode;
	}
}

async function readStdin() {
	const chunks = [];
	for await (const chunk of process.stdin) chunks.push(chunk);
	return Buffer.concat(chunks).toString('utf8');
}

function parsePlan(text) {
	let plan;
	try {
		plan = JSON.parse(text);
	} catch (err) {
		throw new HarnessError(2, `plan is not JSON: ${err.message}`);
	}
	if (!Array.isArray(plan)) throw new HarnessError(2, 'plan is not a JSON array');
	plan.forEach((step, i) => {
		const ops = ['list_tools', 'call', 'raw', 'connect_expect_fail'];
		if (!step || !ops.includes(step.op)) throw new HarnessError(2, `step ${i}: unknown op ${JSON.stringify(step?.op)}`);
		if (step.op === 'call' && typeof step.tool !== 'string') throw new HarnessError(2, `step ${i}: call needs "tool"`);
		if (step.op === 'raw' && typeof step.method !== 'string') throw new HarnessError(2, `step ${i}: raw needs "method"`);
		if (step.op === 'connect_expect_fail' && i !== 0) throw new HarnessError(2, `step ${i}: connect_expect_fail must be the first step`);
	});
	return plan;
}

// describe turns anything the SDK throws into the outcome's error object:
// code is the JSON-RPC error code (McpError) and http_status the HTTP status
// of a refused POST (StreamableHTTPError's code), when the SDK exposes them.
function describe(err) {
	const out = { code: null, message: String(err?.message ?? err) };
	if (err instanceof McpError) {
		out.code = err.code;
		if (err.data !== undefined) out.data = err.data;
	} else if (err instanceof StreamableHTTPError) {
		if (err.code > 0) out.http_status = err.code;
	}
	if (err?.name && err.name !== 'Error') out.name = err.name;
	// fetch's own failures say only "fetch failed"; the reason is the cause.
	if (err?.cause) out.cause = String(err.cause.message ?? err.cause);
	return out;
}

function emit(line) {
	process.stdout.write(JSON.stringify(line) + '\n');
}

async function runStep(client, step) {
	switch (step.op) {
		case 'list_tools':
			// listTools also makes the SDK cache every tool's output schema, so
			// later calls have their structuredContent validated against it.
			return client.listTools();
		case 'call':
			return client.callTool({ name: step.tool, arguments: step.args ?? {} });
		case 'raw':
			return client.request(
				step.params === undefined ? { method: step.method } : { method: step.method, params: step.params },
				ResultSchema,
			);
	}
}

async function main() {
	const url = process.env.PIRCAN_MCP_URL;
	if (!url) throw new HarnessError(2, 'PIRCAN_MCP_URL is not set');
	const token = process.env.PIRCAN_MCP_TOKEN ?? '';
	const plan = parsePlan(await readStdin());

	const headers = token ? { Authorization: `Bearer ${token}` } : {};
	const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
	const client = new Client({ name: 'pircan-mcpclient', version: '1' });
	// Transport errors also reject the request they belong to; the GET stream's
	// own failures (a server without one answers 405) are not a step's outcome.
	client.onerror = (err) => process.stderr.write(`mcpclient: transport: ${err?.message ?? err}\n`);

	let steps = plan;
	try {
		await client.connect(transport);
	} catch (err) {
		if (plan[0]?.op !== 'connect_expect_fail') throw new HarnessError(3, `connect: ${inspect(err)}`);
		emit({ ok: false, error: describe(err) });
		for (let i = 1; i < plan.length; i++) emit({ ok: false, skipped: true, error: { code: null, message: 'not connected' } });
		return;
	}
	if (plan[0]?.op === 'connect_expect_fail') {
		emit({ ok: true, result: { connected: true } });
		steps = plan.slice(1);
	}
	for (const step of steps) {
		try {
			emit({ ok: true, result: await runStep(client, step) });
		} catch (err) {
			emit({ ok: false, error: describe(err) });
		}
	}
	// A real client ends its session; the server may refuse (405), which is fine.
	await transport.terminateSession().catch(() => {});
	await client.close();
}

main().then(
	() => process.stdout.write('', () => process.exit(0)),
	(err) => {
		process.stderr.write(`mcpclient: ${err instanceof HarnessError ? err.message : inspect(err)}\n`);
		process.stdout.write('', () => process.exit(err instanceof HarnessError ? err.exitCode : 4));
	},
);
