// Builds Pi's system prompt, prompt templates and skills for directory trees with the real
// Pi AgentSession (Node >= 22.19), deciding project trust with Pi's own resolver.
// Usage: node pi_resources.mjs PI_PACKAGE_DIR < requests.json
// Request: {cwd, agentDir, trustOverride?: bool, defaultProjectTrust?: str,
//           noContextFiles?: bool, noSkills?: bool, noPromptTemplates?: bool,
//           skillPaths?: [path, ...], promptTemplatePaths?: [path, ...],   (--skill and
//           --prompt-template, resolved as Pi resolves them), systemPrompt?: text|path,
//           appendSystemPrompt?: [text|path, ...] (--system-prompt, --append-system-prompt),
//           expand?: [text, ...], trustChoice?: index}
//           (trustChoice: first save the choice at that index of the list Pi's /trust
//           offers, as /trust saves it)
//           (HOME is taken from the environment)
// Answer: {trusted, systemPrompt, templates: [...], skills: [...] (each with its sourceInfo),
//          contextFiles: [path, ...],
//          expanded: [text, ...], diagnostics: ["path: message", ...] (skills' then
//          templates', name collisions left out)}
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const load = (relative) => import(pathToFileURL(join(process.argv[2], "dist", "core", relative)).href);
const { createAgentSession } = await load("sdk.js");
const { DefaultResourceLoader } = await load("resource-loader.js");
const { SettingsManager } = await load("settings-manager.js");
const { SessionManager } = await load("session-manager.js");
const { ProjectTrustStore, getProjectTrustOptions } = await load("trust-manager.js");
const { resolveProjectTrusted } = await load("project-trust.js");
const { expandPromptTemplate } = await load("prompt-templates.js");

const answers = [];
for (const request of JSON.parse(readFileSync(0, "utf8"))) {
	const { cwd, agentDir } = request;
	if (request.trustChoice !== undefined) {
		new ProjectTrustStore(agentDir).setMany(getProjectTrustOptions(cwd)[request.trustChoice].updates);
	}
	const trusted = await resolveProjectTrusted({
		cwd,
		trustStore: new ProjectTrustStore(agentDir),
		trustOverride: request.trustOverride,
		defaultProjectTrust: request.defaultProjectTrust,
		projectTrustContext: { cwd, mode: "print", hasUI: false },
	});
	const settingsManager = SettingsManager.create(cwd, agentDir, { projectTrusted: trusted });
	const resourceLoader = new DefaultResourceLoader({
		cwd,
		agentDir,
		settingsManager,
		noContextFiles: request.noContextFiles ?? false,
		noSkills: request.noSkills ?? false,
		noPromptTemplates: request.noPromptTemplates ?? false,
		additionalSkillPaths: request.skillPaths ?? [],
		additionalPromptTemplatePaths: request.promptTemplatePaths ?? [],
		systemPrompt: request.systemPrompt,
		appendSystemPrompt: request.appendSystemPrompt,
		noExtensions: true,
	});
	await resourceLoader.reload();
	const { session } = await createAgentSession({
		cwd,
		agentDir,
		settingsManager,
		resourceLoader,
		sessionManager: SessionManager.inMemory(cwd),
		tools: ["read", "bash", "edit", "write"],
	});
	const skills = resourceLoader.getSkills().skills;
	const diagnostics = [...resourceLoader.getSkills().diagnostics, ...resourceLoader.getPrompts().diagnostics]
		.filter((d) => d.type !== "collision")
		.map((d) => `${d.path}: ${d.message}`);
	answers.push({
		trusted,
		systemPrompt: session.systemPrompt,
		contextFiles: resourceLoader.getAgentsFiles().agentsFiles.map((file) => file.path),
		templates: session.promptTemplates.map((t) => ({
			name: t.name,
			description: t.description,
			content: t.content,
			filePath: t.filePath,
			argumentHint: t.argumentHint ?? null,
			sourceInfo: t.sourceInfo,
		})),
		skills: skills.map((s) => ({
			name: s.name,
			description: s.description,
			filePath: s.filePath,
			baseDir: s.baseDir,
			disableModelInvocation: s.disableModelInvocation,
			sourceInfo: s.sourceInfo,
		})),
		diagnostics,
		expanded: (request.expand ?? []).map((text) =>
			expandPromptTemplate(session._expandSkillCommand(text), [...session.promptTemplates]),
		),
	});
	session.dispose?.();
}
process.stdout.write(JSON.stringify(answers));
