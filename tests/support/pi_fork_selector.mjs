// The real Pi /fork selector (UserMessageSelectorComponent) over a session file, opened as
// Pi's interactive mode opens it (showUserMessageSelector: getUserMessagesForForking, the
// last message selected) and driven by keys: the lines it draws (without colours), and
// which message Enter chose or whether it was cancelled, after each key.
// Usage: node pi_fork_selector.mjs <pi-coding-agent dir> '<json request>'
// Request: {sessionFile, cwd, agentDir, width, keys: ["\r", ...]}. Answers {messages, steps}
// ({messages: []} and no steps where Pi says "No messages to fork from").
// The request's optional bindings field is a keybindings.json's content, for Pi's keys.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, requestJson] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { initTheme } = await load("modes/interactive/theme/theme.js");
const { KeybindingsManager } = await load("core/keybindings.js");
const { SessionManager } = await load("core/session-manager.js");
const { SettingsManager } = await load("core/settings-manager.js");
const { createAgentSession } = await load("core/sdk.js");
const { UserMessageSelectorComponent } = await load(
  "modes/interactive/components/user-message-selector.js",
);
const tui = await import(pathToFileURL(path.join(packageDir, "..", "pi-tui", "dist", "index.js")).href);

const request = JSON.parse(requestJson);
const { sessionFile, cwd, agentDir, width, keys } = request;
initTheme("dark");
tui.setKeybindings(new KeybindingsManager(request.bindings ?? {}));
const { session } = await createAgentSession({
  cwd,
  agentDir,
  settingsManager: SettingsManager.create(cwd, agentDir, { projectTrusted: false }),
  sessionManager: SessionManager.open(sessionFile),
});
const messages = session.getUserMessagesForForking();
const steps = [];
if (messages.length > 0) {
  let chosen = null;
  let cancelled = false;
  const selector = new UserMessageSelectorComponent(
    messages.map((m) => ({ id: m.entryId, text: m.text })),
    (entryId) => {
      chosen = entryId;
    },
    () => {
      cancelled = true;
    },
    messages[messages.length - 1].entryId,
  );
  // eslint-disable-next-line no-control-regex
  const plain = (line) => line.replace(/\x1b\[[0-9;]*m/g, "").trimEnd();
  const state = () => ({ lines: selector.render(width).map(plain), chosen, cancelled });
  steps.push(state());
  for (const key of keys) {
    selector.getMessageList().handleInput(key);
    steps.push(state());
  }
}
process.stdout.write(JSON.stringify({ messages, steps }));
session.dispose?.();
