// The real Pi /resume selector (SessionSelectorComponent) over session files, built with the
// loaders Pi's interactive mode gives it (showSessionSelector: SessionManager.list for the
// current folder, SessionManager.listAll for every folder) and driven by keys. After each key,
// once no load is pending: the header's lines (without colours), the listed sessions' paths in
// order with each one's tree prefix, the selected row, the empty-list line and whether rows
// show each session's folder.
// Usage: node pi_session_selector.mjs <pi-coding-agent dir> '<json request>'
// Request: {cwd, sessionDir (null: Pi's folder for cwd), width, keys: ["\t", ...]}.
// Pi's agent directory is the PI_CODING_AGENT_DIR the script is run with.
// The request's optional bindings field is a keybindings.json's content, for Pi's keys.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, requestJson] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { initTheme } = await load("modes/interactive/theme/theme.js");
const { KeybindingsManager } = await load("core/keybindings.js");
const { SessionManager } = await load("core/session-manager.js");
const { SessionSelectorComponent } = await load("modes/interactive/components/session-selector.js");
const tui = await import(pathToFileURL(path.join(packageDir, "..", "pi-tui", "dist", "index.js")).href);

const request = JSON.parse(requestJson);
const { cwd, sessionDir, width, keys } = request;
initTheme("dark");
const keybindings = new KeybindingsManager(request.bindings ?? {});
tui.setKeybindings(keybindings);
const manager = SessionManager.create(cwd, sessionDir ?? undefined);
const selector = new SessionSelectorComponent(
  (onProgress) => SessionManager.list(manager.getCwd(), manager.getSessionDir(), onProgress),
  (onProgress) =>
    manager.usesDefaultSessionDir()
      ? SessionManager.listAll(onProgress)
      : SessionManager.listAll(manager.getSessionDir(), onProgress),
  () => {},
  () => {},
  () => {},
  () => {},
  { renameSession: async () => {}, showRenameHint: true, keybindings },
  manager.getSessionFile(),
);
const list = selector.getSessionList();
// eslint-disable-next-line no-control-regex
const plain = (line) => line.replace(/\x1b\[[0-9;]*m/g, "").trimEnd();
const settled = async () => {
  for (let waited = 0; selector.currentLoading || selector.allLoading; waited++) {
    if (waited > 2000) throw new Error("Pi's selector kept loading");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};
const state = () => {
  const rendered = list.render(width).map(plain);
  return {
    header: selector.header.render(width).map(plain),
    rows: list.filteredSessions.map((node) => ({ path: node.session.path, tree: list.buildTreePrefix(node) })),
    selected: list.selectedIndex,
    showCwd: list.showCwd,
    empty: list.filteredSessions.length === 0 ? rendered[rendered.length - 1] : null,
  };
};
await settled();
const steps = [state()];
for (const key of keys) {
  list.handleInput(key);
  await settled();
  steps.push(state());
}
process.stdout.write(JSON.stringify({ steps }));
