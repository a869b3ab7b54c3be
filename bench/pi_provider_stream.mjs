// Streams one recorded answer through the real Pi's transport, again and again (used by
// provider_streams.py). Usage: node pi_provider_stream.mjs PI_ORACLE_LIB SPEC.json RUNS
// SPEC: {api, model, context, options} with the model's baseUrl on the loopback server.
// Prints {cpuMs, wallMs: [...], firstTokenMs: [...], events, stopReasons}.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [libPath, specPath, runsText] = process.argv.slice(2);
const { resolvePi } = await import(pathToFileURL(libPath).href);
const pi = resolvePi();
const spec = JSON.parse(readFileSync(specPath, "utf8"));
// Every pi-ai transport is dist/api/<api>.js.
const api = await import(pathToFileURL(join(pi.aiDir, "dist", "api", `${spec.api}.js`)).href);

async function once() {
	const started = performance.now();
	let first = null;
	let events = 0;
	const stream = api.streamSimple(spec.model, structuredClone(spec.context), { ...spec.options });
	for await (const event of stream) {
		events++;
		if (first === null && /_delta$/.test(event.type)) first = performance.now() - started;
	}
	const message = await stream.result();
	return { wall: performance.now() - started, first, events, stop: message.stopReason };
}

await once(); // warm-up: module loading and the first connection
const runs = Number(runsText);
const wallMs = [];
const firstTokenMs = [];
const stopReasons = new Set();
let events = 0;
const cpu = process.cpuUsage();
for (let run = 0; run < runs; run++) {
	const result = await once();
	wallMs.push(result.wall);
	if (result.first !== null) firstTokenMs.push(result.first);
	events += result.events;
	stopReasons.add(result.stop);
}
const used = process.cpuUsage(cpu);
const cpuMs = (used.user + used.system) / 1000;
process.stdout.write(
	`${JSON.stringify({ version: pi.aiVersion, cpuMs, wallMs, firstTokenMs, events, stopReasons: [...stopReasons] })}\n`,
);
