// Writes a session file the way the TypeScript extension leaves one behind in Local mode:
// the real Pi SessionManager appends every entry and serializes it, the extension's entries
// (window markers, a reminder, note entries) carry exactly the extension's shapes, built as
// the extension builds them (object literals with the identity spread in).
//
// Usage: node pi_extension_session.mjs <pi-coding-agent package dir> <session file to create>
// Prints nothing; the file is the output.

import { randomUUID } from "node:crypto";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkgDir, file] = process.argv.slice(2);
const { SessionManager } = await import(
	pathToFileURL(join(pkgDir, "dist", "core", "session-manager.js")).href
);

const sm = SessionManager.open(file, undefined, dirname(file));
let clock = 1767225600000;
const now = () => (clock += 1000);
const usage = {
	input: 1200,
	output: 40,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: 1240,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

function marker(kind, identity, content, trimPreviousWindow = false) {
	sm.appendCustomMessageEntry("codex-context-window", content, true, {
		protocol: 1,
		id: randomUUID(),
		contextManagement: {
			protocol: 1,
			kind,
			...identity,
			...(trimPreviousWindow ? { trimPreviousWindow: true } : {}),
		},
	});
}

function windowText(identity, hint) {
	const lines = [
		"<context_window>",
		"Agent name: /root",
		`First context window id: ${identity.firstWindowId}`,
		`Current context window id: ${identity.currentWindowId}`,
	];
	if (identity.previousWindowId) lines.push(`Previous context window id: ${identity.previousWindowId}`);
	if (hint) lines.push(hint);
	lines.push("</context_window>");
	return `<context_window_guidance>\nCheckpoint in notes before new_context.\n</context_window_guidance>\n\n${lines.join("\n")}`;
}

function user(text) {
	return sm.appendMessage({ role: "user", content: [{ type: "text", text }], timestamp: now() });
}

function assistant(content, stopReason) {
	sm.appendMessage({
		role: "assistant",
		content,
		api: "openai-codex-responses",
		provider: "openai-codex",
		model: "gpt-5.5",
		usage,
		stopReason,
		timestamp: now(),
	});
}

function callTool(id, name, args, result) {
	assistant([{ type: "toolCall", id, name, arguments: args }], "toolUse");
	return () =>
		sm.appendMessage({
			role: "toolResult",
			toolCallId: id,
			toolName: name,
			content: [{ type: "text", text: result }],
			isError: false,
			timestamp: now(),
		});
}

function note(action, path, text) {
	sm.appendCustomEntry("codex-context-note", { protocol: 1, action, path, text, timestamp: now() });
}

const w0 = randomUUID();
const w1 = randomUUID();
const first = { firstWindowId: w0, currentWindowId: w0, windowNumber: 0 };
const second = { firstWindowId: w0, currentWindowId: w1, previousWindowId: w0, windowNumber: 1 };

marker("window", first, windowText(first));
const question = user("Where is the deploy key? It is deploy-key-4410.");
let finish = callTool(
	"call-notes-1",
	"notes",
	{ action: "write_file", path: "checkpoint.md", text: "Key: deploy-key-4410\nNext: rotate" },
	'{"source":"pi-session","file":{"path":"/root/notes/checkpoint.md"}}',
);
note("write", "/root/notes/checkpoint.md", "Key: deploy-key-4410\nNext: rotate");
finish();
marker("reminder", first, "<context_window_reminder>\nOnly 5000 context tokens remain.\n</context_window_reminder>");
finish = callTool(
	"call-new-context",
	"new_context",
	{},
	"A new context window will start without summarizing conversation history.",
);
finish();
const hint = [
	"Recent notes (up to 5, most-recent first):",
	"- /root/notes/checkpoint.md (2 lines, 33 UTF-8 bytes)",
	`Previous window history IDs: ${JSON.stringify({ window_id: w0, user_item_ids: [question] })}`,
].join("\n");
marker("window", second, windowText(second, hint), true);
assistant([{ type: "text", text: "Resuming from the checkpoint." }], "stop");
user("Rotate it now.");
note("append", "/root/notes/checkpoint.md", "\nRotated.");
assistant([{ type: "text", text: "Rotated." }], "stop");
