// Writes context-window entries the way the TypeScript extension does, through the real
// Pi SessionManager, and prints each stored entry as Pi serializes it (one JSON line each).
//
// Usage: node pi_extension_lines.mjs <pi-coding-agent package dir>
//
// The details objects are built as the extension builds them: object literals with the
// identity spread in, so JavaScript's own key order is what ends up in the lines.

import { join } from "node:path";
import { pathToFileURL } from "node:url";

const pkgDir = process.argv[2];
const { SessionManager } = await import(
	pathToFileURL(join(pkgDir, "dist", "core", "session-manager.js")).href
);

const sm = SessionManager.inMemory("/project");

function marker(kind, identity, id, content, trimPreviousWindow = false) {
	sm.appendCustomMessageEntry("codex-context-window", content, true, {
		protocol: 1,
		id,
		contextManagement: {
			protocol: 1,
			kind,
			...identity,
			...(trimPreviousWindow ? { trimPreviousWindow: true } : {}),
		},
	});
}

const first = { firstWindowId: "w-0", currentWindowId: "w-0", windowNumber: 0 };
const second = {
	firstWindowId: "w-0",
	currentWindowId: "w-1",
	previousWindowId: "w-0",
	windowNumber: 1,
};

marker("window", first, "m-0", "<context_window>\nwindow 0\n</context_window>");
sm.appendCustomEntry("codex-context-note", {
	protocol: 1,
	action: "write",
	path: "/root/notes/checkpoint.md",
	text: "progress é\n",
	timestamp: 1767225600000,
});
marker("reminder", first, "m-1", "<context_window_reminder>\nlow\n</context_window_reminder>");
marker("fallback", first, "m-2", "<context_window_reminder>\nout\n</context_window_reminder>");
marker("window", second, "m-3", "<context_window>\nwindow 1\n</context_window>", true);
sm.appendCustomEntry("codex-context-note-snapshot", {
	protocol: 1,
	timestamp: 1767225600005,
	files: [
		{
			path: "/root/notes/checkpoint.md",
			text: "progress é\n",
			createdAt: 1767225600000,
			updatedAt: 1767225600000,
		},
	],
});

for (const entry of sm.getEntries()) process.stdout.write(`${JSON.stringify(entry)}\n`);
