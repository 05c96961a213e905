// client.mjs — drives an A2A 1.0 agent over the JSON-RPC binding with the
// official A2A JavaScript SDK, so that PIRCAN's A2A face is tested by a client
// it did not write (internal/a2aclient runs it; see testdata/README.md).
//
// Env: A2A_CARD_URL (the agent card's full URL: the client the steps use is
// made from it, on first need), A2A_TOKEN (sent as "Authorization: Bearer
// <token>" on every request, the card's included; none when empty).
// Stdin: a JSON array of steps:
//   {"op":"card","url":"..."}              resolve a card (url: A2A_CARD_URL
//                                          when absent) and use its client
//   {"op":"card","base":"..."}             the same from an agent's URL, as
//                                          createFromUrl(base) finds its card
//   {"op":"send","text":"...","skill":"..."}  SendMessage; skill, if any, goes
//                                          in the message's metadata.skill
//   {"op":"get","id":"..."}                GetTask
//   {"op":"list"}                          ListTasks
//   {"op":"cancel","id":"..."}             CancelTask
//   {"op":"poll","id":"...","until":["completed",...],"timeout_ms":20000,"interval_ms":100}
//                                          GetTask until the state is one of
//                                          until (short names, as below)
// Stdout: one JSON line per step, {"ok":true,"result":...} or
// {"ok":false,"error":{"code","message","data"?,"http_status"?,"name"?,"cause"?}}.
// Results are the SDK's objects turned back into A2A's JSON by the SDK's own
// toJSON: card → the card as served (once the SDK made a client of it), send → SendMessageResponse ({"task":...} or
// {"message":...}), get/cancel/poll → Task, list → ListTasksResponse. A task
// state on the wire is "TASK_STATE_COMPLETED"; its short name is "completed".
// Exit: 0 once every step has its line; 2 on a bad plan; 4 on any other
// harness failure (stderr says why).
import {
	CancelTaskRequest,
	GetTaskRequest,
	ListTasksRequest,
	ListTasksResponse,
	SendMessageRequest,
	SendMessageResponse,
	Task,
} from '@a2a-js/sdk';
import {
	ClientFactory,
	ClientFactoryOptions,
	DefaultAgentCardResolver,
	JsonRpcTransportFactory,
	createAuthenticatingFetchWithRetry,
} from '@a2a-js/sdk/client';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
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

const needsID = ['get', 'cancel', 'poll'];

function parsePlan(text) {
	let plan;
	try {
		plan = JSON.parse(text);
	} catch (err) {
		throw new HarnessError(2, `plan is not JSON: ${err.message}`);
	}
	if (!Array.isArray(plan)) throw new HarnessError(2, 'plan is not a JSON array');
	plan.forEach((step, i) => {
		const ops = ['card', 'send', 'get', 'list', 'cancel', 'poll'];
		if (!step || !ops.includes(step.op)) throw new HarnessError(2, `step ${i}: unknown op ${JSON.stringify(step?.op)}`);
		if (step.op === 'send' && typeof step.text !== 'string') throw new HarnessError(2, `step ${i}: send needs "text"`);
		if (needsID.includes(step.op) && typeof step.id !== 'string') throw new HarnessError(2, `step ${i}: ${step.op} needs "id"`);
		if (step.op === 'poll' && !(Array.isArray(step.until) && step.until.length > 0)) throw new HarnessError(2, `step ${i}: poll needs "until"`);
	});
	return plan;
}

// The last HTTP status the SDK got, so that an error it throws for a refused
// request (its message has the status, its fields do not) carries it.
let lastStatus = 0;

function makeFetch(token) {
	const recording = async (...args) => {
		const res = await fetch(...args);
		lastStatus = res.status;
		return res;
	};
	// The SDK's own way to authenticate every request; no retry on 401.
	return createAuthenticatingFetchWithRetry(recording, {
		headers: async () => (token ? { Authorization: `Bearer ${token}` } : {}),
		shouldRetryWithHeaders: async () => undefined,
	});
}

// describe turns anything the SDK throws into the outcome's error object: its
// JSON-RPC errors (A2AError subclasses of the jsonrpc transport) have the code
// in envelopeCode and the error's data in data.
function describe(err) {
	const out = { code: null, message: String(err?.message ?? err) };
	if (typeof err?.envelopeCode === 'number') out.code = err.envelopeCode;
	if (err?.data !== undefined) out.data = err.data;
	if (lastStatus !== 0 && (lastStatus < 200 || lastStatus > 299)) out.http_status = lastStatus;
	if (err?.name && err.name !== 'Error') out.name = err.name;
	// fetch's own failures say only "fetch failed"; the reason is the cause.
	if (err?.cause) out.cause = String(err.cause.message ?? err.cause);
	return out;
}

function emit(line) {
	process.stdout.write(JSON.stringify(line) + '\n');
}

// shortState is a task state's short name: TASK_STATE_INPUT_REQUIRED →
// input_required (PIRCAN's names: completed, failed, rejected, canceled).
const shortState = (wire) => String(wire ?? '').replace(/^TASK_STATE_/, '').toLowerCase();

// RecordingResolver is the SDK's resolver keeping the card as served, for the
// card step's result (the SDK keeps it raw or in its internal form, by shape).
class RecordingResolver extends DefaultAgentCardResolver {
	normalizeAgentCard(card) {
		this.raw = card;
		return super.normalizeAgentCard(card);
	}
}

class Harness {
	constructor(cardURL, token) {
		this.cardURL = cardURL;
		const fetchImpl = makeFetch(token);
		this.resolver = new RecordingResolver({ fetchImpl });
		this.factory = new ClientFactory(
			ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
				transports: [new JsonRpcTransportFactory({ fetchImpl })],
				preferredTransports: ['JSONRPC'],
				cardResolver: this.resolver,
			}),
		);
		this.client = null;
	}

	// A full card URL with path '' is how the SDK resolves a card that is not
	// at <base>/.well-known/agent-card.json (PIRCAN's are per agent).
	// With a base alone, the SDK's own rule finds the card below it.
	async card(url, base) {
		this.client = base
			? await this.factory.createFromUrl(base)
			: await this.factory.createFromUrl(url ?? this.cardURL, '');
		return this.resolver.raw;
	}

	async ensureClient() {
		if (!this.client) await this.card();
		return this.client;
	}

	async getTask(id) {
		const client = await this.ensureClient();
		return Task.toJSON(await client.getTask(GetTaskRequest.fromJSON({ id })));
	}

	async run(step) {
		switch (step.op) {
			case 'card':
				return this.card(step.url, step.base);
			case 'send': {
				const client = await this.ensureClient();
				// fromJSON fills the defaults toJSON expects (role, contextId, …).
				const params = SendMessageRequest.fromJSON({
					message: {
						messageId: randomUUID(),
						role: 'ROLE_USER',
						parts: [{ text: step.text }],
						...(step.skill ? { metadata: { skill: step.skill } } : {}),
					},
				});
				const result = await client.sendMessage(params);
				// sendMessage returns the payload alone; a Message has a messageId.
				const $case = 'messageId' in result ? 'message' : 'task';
				return SendMessageResponse.toJSON({ payload: { $case, value: result } });
			}
			case 'get':
				return this.getTask(step.id);
			case 'list': {
				const client = await this.ensureClient();
				return ListTasksResponse.toJSON(await client.listTasks(ListTasksRequest.fromJSON({})));
			}
			case 'cancel': {
				const client = await this.ensureClient();
				return Task.toJSON(await client.cancelTask(CancelTaskRequest.fromJSON({ id: step.id })));
			}
			case 'poll':
				return this.poll(step);
		}
	}

	// poll is what an A2A client without streaming or push does: GetTask again
	// until the task reaches a state it waits for.
	async poll({ id, until, timeout_ms = 20000, interval_ms = 100 }) {
		const wanted = until.map(shortState);
		const deadline = Date.now() + timeout_ms;
		for (;;) {
			const task = await this.getTask(id);
			const state = task.status?.state;
			if (wanted.includes(shortState(state))) return task;
			if (Date.now() + interval_ms > deadline) {
				const err = new Error(`poll: task ${id} still ${state ?? 'without a state'} after ${timeout_ms} ms (waiting for ${until.join(', ')})`);
				err.data = { last: task };
				throw err;
			}
			await sleep(interval_ms);
		}
	}
}

async function main() {
	const cardURL = process.env.A2A_CARD_URL;
	if (!cardURL) throw new HarnessError(2, 'A2A_CARD_URL is not set');
	const plan = parsePlan(await readStdin());
	const harness = new Harness(cardURL, process.env.A2A_TOKEN ?? '');
	for (const step of plan) {
		lastStatus = 0;
		try {
			emit({ ok: true, result: await harness.run(step) });
		} catch (err) {
			if (err instanceof HarnessError) throw err;
			emit({ ok: false, error: describe(err) });
		}
	}
}

main().then(
	() => process.stdout.write('', () => process.exit(0)),
	(err) => {
		process.stderr.write(`a2aclient: ${err instanceof HarnessError ? err.message : inspect(err)}\n`);
		process.stdout.write('', () => process.exit(err instanceof HarnessError ? err.exitCode : 4));
	},
);
