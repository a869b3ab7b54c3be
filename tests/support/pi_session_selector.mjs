// The real Pi /resume selector (SessionSelectorComponent) over session files, built with the
// loaders Pi's interactive mode gives it (showSessionSelector: SessionManager.list for the
// current folder, SessionManager.listAll for every folder) and driven by keys. After each key,
// once no load is pending: the header's lines (without colours), the listed sessions' paths in
// order with each one's tree prefix, the selected row, the empty-list line and whether rows
// show each session's folder; while renaming, the lines drawn in the list's place; and for
// each of the request's widths, the hint lines and the list as drawn (without colours), with
// the colour each row's message is drawn in.
// Usage: node pi_session_selector.mjs <pi-coding-agent dir> '<json request>'
// Request: {cwd, sessionDir (null: Pi's folder for cwd), width, keys: ["\t", ...],
// widths: [40, ...], now (ms: the clock ages are told by), current (the session file being
// run, optional)}.
// Pi's agent directory is the PI_CODING_AGENT_DIR the script is run with.
// The request's optional bindings field is a keybindings.json's content, for Pi's keys.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, requestJson] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { initTheme, theme } = await load("modes/interactive/theme/theme.js");
const { KeybindingsManager } = await load("core/keybindings.js");
const { SessionManager } = await load("core/session-manager.js");
const { SessionSelectorComponent } = await load("modes/interactive/components/session-selector.js");
const tui = await import(pathToFileURL(path.join(packageDir, "..", "pi-tui", "dist", "index.js")).href);

const request = JSON.parse(requestJson);
const { cwd, sessionDir, width, keys, widths = [], now, current } = request;
if (now !== undefined) {
  // Pi tells a session's age from `new Date()`: a fixed clock.
  const RealDate = Date;
  globalThis.Date = class extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(now);
      else super(...args);
    }
    static now() {
      return now;
    }
  };
}
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
  current ?? manager.getSessionFile(),
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
const colours = ["error", "accent", "warning"].map((name) => [
  name,
  theme.fg(name, "\u0000").split("\u0000")[0],
]);
// The colour a row's message is drawn in, if any: the one whose code comes just before it.
const colourOf = (line, node) => {
  const message = plain(line).slice(2 + list.buildTreePrefix(node).length);
  const found = colours.find(([, code]) => line.includes(code + message.slice(0, 1)));
  return found ? found[0] : null;
};
const view = (columns) => {
  const [, ...hints] = selector.header.render(columns).map(plain);
  const drawn = list.render(columns);
  const count = list.filteredSessions.length;
  const first = Math.max(0, Math.min(list.selectedIndex - Math.floor(list.maxVisible / 2), count - list.maxVisible));
  const shown = list.filteredSessions.slice(first, first + list.maxVisible);
  return {
    hints,
    list: drawn.map(plain),
    colours: shown.map((node, index) => colourOf(drawn[2 + index], node)),
  };
};
const state = () => {
  const rendered = list.render(width).map(plain);
  return {
    views: Object.fromEntries(widths.map((columns) => [columns, view(columns)])),
    header: selector.header.render(width).map(plain),
    rows: list.filteredSessions.map((node) => ({ path: node.session.path, tree: list.buildTreePrefix(node) })),
    selected: list.selectedIndex,
    showCwd: list.showCwd,
    empty: list.filteredSessions.length === 0 ? rendered[rendered.length - 1] : null,
    // While a session is renamed: what the selector draws in place of the list.
    rename: selector.mode === "rename" ? selector.render(width).map(plain) : null,
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
