// The real Pi AgentSession cycling models (Ctrl+P, Shift+Ctrl+P) and thinking levels
// (Shift+Tab): what each step returns and the model and thinking-level changes it records.
// Usage: node pi_model_cycle.mjs <pi-coding-agent dir> <agent dir> <cwd> '<json request>'
// Request: {patterns: [..] | null, steps: ["forward" | "backward" | "thinking", ...]}.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, agentDir, cwd, requestJson] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { ModelRuntime } = await load("core/model-runtime.js");
const { SettingsManager } = await load("core/settings-manager.js");
const { SessionManager } = await load("core/session-manager.js");
const { createAgentSession } = await load("core/sdk.js");
const { resolveModelScopeWithDiagnostics } = await load("core/model-resolver.js");

const { patterns, steps } = JSON.parse(requestJson);
const modelRuntime = await ModelRuntime.create({
  authPath: path.join(agentDir, "auth.json"),
  modelsPath: path.join(agentDir, "models.json"),
  allowModelNetwork: false,
});
const scopedModels = patterns ? (await resolveModelScopeWithDiagnostics(patterns, modelRuntime)).scopedModels : [];
const sessionManager = SessionManager.inMemory(cwd);
const { session } = await createAgentSession({
  cwd,
  agentDir,
  modelRuntime,
  settingsManager: SettingsManager.create(cwd, agentDir, { projectTrusted: false }),
  sessionManager,
  scopedModels,
});
const start = sessionManager.getEntries().length;
const results = [];
for (const step of steps) {
  if (step === "thinking") {
    results.push(session.cycleThinkingLevel() ?? null);
  } else {
    const result = await session.cycleModel(step);
    results.push(result ? [`${result.model.provider}/${result.model.id}`, result.thinkingLevel] : null);
  }
}
const changes = sessionManager
  .getEntries()
  .slice(start)
  .flatMap((e) =>
    e.type === "model_change"
      ? [["model", `${e.provider}/${e.modelId}`]]
      : e.type === "thinking_level_change"
        ? [["thinking", e.thinkingLevel]]
        : [],
  );
process.stdout.write(JSON.stringify({ results, changes }));
session.dispose?.();
