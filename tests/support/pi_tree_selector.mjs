// The real Pi /tree navigator (TreeSelectorComponent) over a session file, opened as Pi's
// interactive mode opens it (the session's tree, its leaf selected, the default filter) with
// the key bindings of a keybindings.json, and driven by keys: after each key, the entries
// shown, the selected one, the words after the count (the filter, label times), the search
// query, whether the selector asked to close, the lines drawn (without colours) and what the
// copy key copied.
// Usage: node pi_tree_selector.mjs <pi-coding-agent dir> '<json request>'
// Request: {sessionFile, bindings: {...}, width, keys: ["\x15", ...], stamps: [ISO time, ...]}.
// Answers {steps, stampTexts, searchable}: stampTexts, each stamp as the navigator shows a
// label's time; searchable, each entry's text that typing searches, lower-cased, by id.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, requestJson] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { initTheme } = await load("modes/interactive/theme/theme.js");
const { KeybindingsManager } = await load("core/keybindings.js");
const { SessionManager } = await load("core/session-manager.js");
const { TreeSelectorComponent } = await load("modes/interactive/components/tree-selector.js");
const tui = await import(pathToFileURL(path.join(packageDir, "..", "pi-tui", "dist", "index.js")).href);

const { sessionFile, bindings, width, keys } = JSON.parse(requestJson);
initTheme("dark");
tui.setKeybindings(new KeybindingsManager(bindings));
const manager = SessionManager.open(sessionFile);
let copied = null;
let closed = false;
const selector = new TreeSelectorComponent(
  manager.getTree(),
  manager.getLeafId(),
  40,
  () => {},
  () => {
    closed = true;
  },
  () => {},
  undefined,
  "default",
);
selector.onCopy = (text) => {
  copied = text ?? null;
};
const list = selector.getTreeList();
// eslint-disable-next-line no-control-regex
const plain = (line) => line.replace(/\x1b\[[0-9;]*m/g, "").trimEnd();
const state = () => ({
  shown: list.filteredNodes.map((flat) => flat.node.entry.id),
  selected: list.getSelectedNode()?.entry.id ?? null,
  status: list.getStatusLabels(),
  query: list.getSearchQuery(),
  closed,
  lines: selector.render(width).map(plain),
  copied,
});
const steps = [state()];
for (const key of keys) {
  copied = null;
  selector.handleInput(key);
  steps.push(state());
}
const stampTexts = (JSON.parse(requestJson).stamps ?? []).map((stamp) => list.formatLabelTimestamp(stamp));
const searchable = Object.fromEntries(
  list.flatNodes.map((flat) => [flat.node.entry.id, list.getSearchableText(flat.node).toLowerCase()]),
);
process.stdout.write(JSON.stringify({ steps, stampTexts, searchable }));
