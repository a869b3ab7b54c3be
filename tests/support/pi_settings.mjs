// Pi's own reading of its settings for a working directory: the values a session starts
// with (thinking level clamped to the model, as createAgentSession does) and every setting
// ctxmodes honours, through Pi's SettingsManager getters.
// Usage: node pi_settings.mjs <pi-coding-agent dir> <agent dir> <cwd> <project trusted: 0|1>
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, agentDir, cwd, trusted] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { SettingsManager } = await load("core/settings-manager.js");
const { SessionManager } = await load("core/session-manager.js");
const { createAgentSession } = await load("core/sdk.js");

const settings = SettingsManager.create(cwd, agentDir, { projectTrusted: trusted === "1" });
const { session } = await createAgentSession({
  cwd,
  agentDir,
  settingsManager: settings,
  sessionManager: SessionManager.inMemory(cwd),
});
const errors = settings.errors ?? [];
process.stdout.write(
  JSON.stringify({
    errors: errors.map((e) => String(e.error?.message ?? e)),
    model: session.model ? `${session.model.provider}/${session.model.id}` : null,
    // The model the merged files name (without it Pi starts on the first model it has).
    startupModel:
      settings.getDefaultProvider() && settings.getDefaultModel()
        ? `${settings.getDefaultProvider()}/${settings.getDefaultModel()}`
        : null,
    modelThinkingLevels: settings.getAllModelThinkingLevels(),
    sessionDir: settings.getSessionDir() ?? null,
    thinkingLevel: session.thinkingLevel,
    steeringMode: session.agent.steeringMode,
    followUpMode: session.agent.followUpMode,
    compaction: settings.getCompactionSettings(),
    branchSummary: settings.getBranchSummarySettings(),
    retry: settings.getRetrySettings(),
    providerRetry: settings.getProviderRetrySettings(),
    httpIdleTimeoutMs: settings.getHttpIdleTimeoutMs(),
    enableSkillCommands: settings.getEnableSkillCommands(),
    treeFilterMode: settings.getTreeFilterMode(),
    doubleEscapeAction: settings.getDoubleEscapeAction(),
    externalEditor: settings.getExternalEditorCommand(),
    quietStartup: settings.getQuietStartup(),
    hideThinkingBlock: settings.getHideThinkingBlock(),
    // Whether a file sets it: unset, Pi shows thinking, where ctxmodes collapses it.
    hideThinkingBlockSet: (settings.settings?.hideThinkingBlock ?? null) !== null,
    blockImages: settings.getBlockImages(),
    autoResizeImages: settings.getImageAutoResize(),
    thinkingBudgets: session.agent.thinkingBudgets ?? null,
    shellPath: settings.getShellPath() ?? null,
    shellCommandPrefix: settings.getShellCommandPrefix() ?? null,
    enabledModels: settings.getEnabledModels() ?? null,
    defaultTools: settings.getDefaultTools() ?? null,
  }),
);
session.dispose?.();
