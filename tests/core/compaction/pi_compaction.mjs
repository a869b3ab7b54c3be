// Runs Pi's pure compaction functions on a batch of inputs (differential tests).
//
// Usage: node pi_compaction.mjs <node_modules dir>  < requests.json  > answers.json
// Each request is {op, ...arguments}; each answer is {value} or, where Pi throws, {error}.
// Only Pi's core modules are imported (by file path), which works on Node 20 and 22.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const core = join(process.argv[2], "@earendil-works", "pi-coding-agent", "dist", "core");
const load = (path) => import(pathToFileURL(join(core, path)).href);
const compaction = await load("compaction/compaction.js");
const branch = await load("compaction/branch-summarization.js");
const utils = await load("compaction/utils.js");
const messages = await load("messages.js");

const plainFileOps = (ops) => ({ read: [...ops.read], written: [...ops.written], edited: [...ops.edited] });

function run(request) {
	switch (request.op) {
		case "estimateTokens":
			return compaction.estimateTokens(request.message);
		case "estimateContextTokens":
			return compaction.estimateContextTokens(request.messages);
		case "serialize":
			return utils.serializeConversation(messages.convertToLlm(request.messages));
		case "prepareCompaction": {
			const prepared = compaction.prepareCompaction(request.entries, request.settings);
			if (!prepared) return null;
			const { settings, fileOps, ...rest } = prepared;
			return { ...rest, fileOps: plainFileOps(fileOps) };
		}
		case "prepareBranchEntries": {
			const prepared = branch.prepareBranchEntries(request.entries, request.budget);
			return { ...prepared, fileOps: plainFileOps(prepared.fileOps) };
		}
		case "fileLists":
			return utils.computeFileLists({
				read: new Set(request.read),
				written: new Set(request.written),
				edited: new Set(request.edited),
			});
		default:
			throw new Error(`unknown op ${request.op}`);
	}
}

const requests = JSON.parse(readFileSync(0, "utf8"));
const answers = requests.map((request) => {
	try {
		return { value: run(request) };
	} catch (error) {
		return { error: String(error?.message ?? error) };
	}
});
process.stdout.write(JSON.stringify(answers));
