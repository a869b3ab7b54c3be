// Asks the real Pi AgentSession whether it would compact automatically after an answer.
// Usage: node pi_check_compaction.mjs PI_PACKAGE_DIR < requests.json   (Node >= 22.19)
// Request: [{file, answerId, model: {provider, id, contextWindow, maxTokens}, settings}];
// answer: {triggers: [...]}, the compactions `_checkCompaction` started for the answer with
// id `answerId` in the session file, the branch ending at that answer being the active one.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const load = (relative) => import(pathToFileURL(join(process.argv[2], "dist", "core", relative)).href);
const { AgentSession } = await load("agent-session.js");
const { SessionManager } = await load("session-manager.js");
const requests = JSON.parse(readFileSync(0, "utf8"));

const answers = [];
for (const { file, answerId, model, settings } of requests) {
	const manager = SessionManager.open(file);
	manager.branch(answerId);
	const answer = manager.getEntry(answerId).message;
	const triggers = [];
	// The real method, on a session reduced to what it reads; compaction itself is recorded
	// instead of run (the question is only whether Pi would start one).
	const session = {
		settingsManager: { getCompactionSettings: () => settings },
		model,
		sessionManager: manager,
		agent: { state: { messages: manager.buildSessionContext().messages } },
		_overflowRecoveryAttempted: false,
		_emit: () => {},
		_emitSessionCompactFailed: async () => {},
		_runAutoCompaction: async (reason) => {
			triggers.push(reason);
			return false;
		},
	};
	await AgentSession.prototype._checkCompaction.call(session, answer);
	answers.push({ triggers });
}
process.stdout.write(JSON.stringify(answers));
