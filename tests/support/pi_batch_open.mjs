// Opens many session files with the real Pi SessionManager in one process.
// Usage: node pi_batch_open.mjs PI_ORACLE_LIB < requests.json
// Request: [{file, at: [id | null, ...]}]; prints one answer per request (see pi_oracle.py).
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const { flatTree, importCore, resolvePi } = await import(pathToFileURL(process.argv[2]).href);
const core = await importCore(resolvePi());
const requests = JSON.parse(readFileSync(0, "utf8"));

const state = (manager) => {
	const context = manager.buildSessionContext();
	return {
		leafId: manager.getLeafId(),
		branchIds: manager.getBranch().map((entry) => entry.id),
		contextEntryIds: manager.buildContextEntries().map((entry) => entry.id),
		context: { messages: context.messages, thinkingLevel: context.thinkingLevel, model: context.model },
		llm: core.convertToLlm(context.messages),
	};
};

const answers = requests.map(({ file, at = [] }) => {
	try {
		const manager = core.SessionManager.open(file);
		const answer = {
			header: manager.getHeader(),
			entryCount: manager.getEntries().length,
			sessionName: manager.getSessionName() ?? null,
			tree: flatTree(manager),
			...state(manager),
			positions: {},
		};
		for (const id of at) {
			if (id === null) manager.resetLeaf();
			else manager.branch(id);
			answer.positions[id === null ? "__null__" : id] = state(manager);
		}
		return answer;
	} catch (error) {
		return { openError: String(error?.message ?? error) };
	}
});
process.stdout.write(JSON.stringify(answers));
