// Times the real Pi opening a session and building its context (used by session_open.py).
// Usage: node pi_session_open.mjs PI_ORACLE_LIB FILE.jsonl RUNS
// Prints {version, timesMs, contextSha256}; the hash is over JSON.stringify(context).
import { createHash } from "node:crypto";
import { pathToFileURL } from "node:url";

const [libPath, file, runsText] = process.argv.slice(2);
const { importCore, resolvePi } = await import(pathToFileURL(libPath).href);
const pi = resolvePi();
const core = await importCore(pi);
const timesMs = [];
let context;
for (let run = 0; run < Number(runsText); run++) {
	const start = performance.now();
	const manager = core.SessionManager.open(file);
	context = manager.buildSessionContext();
	timesMs.push(performance.now() - start);
}
const contextSha256 = createHash("sha256").update(JSON.stringify(context)).digest("hex");
process.stdout.write(`${JSON.stringify({ version: pi.version, timesMs, contextSha256 })}\n`);
