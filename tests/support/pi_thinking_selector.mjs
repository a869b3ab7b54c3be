// The real Pi /thinking selector (ThinkingSelectorComponent) driven by keys: what it lists
// after each key (each row's level, its label with the current level's mark, its words),
// the selected row, the search, and the level chosen (with Enter, or with Ctrl+S as the
// default), as Pi's interactive mode opens it (showThinkingSelector).
// Usage: node pi_thinking_selector.mjs <pi-coding-agent dir> '<json request>'
// Request: {current, levels: [..] (the model's), default, keys: ["\x1b[B", ...], bindings}.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, requestJson] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { initTheme } = await load("modes/interactive/theme/theme.js");
const { KeybindingsManager } = await load("core/keybindings.js");
const { ThinkingSelectorComponent } = await load("modes/interactive/components/thinking-selector.js");
const tui = await import(pathToFileURL(path.join(packageDir, "..", "pi-tui", "dist", "index.js")).href);

const request = JSON.parse(requestJson);
initTheme("dark");
tui.setKeybindings(new KeybindingsManager(request.bindings ?? {}));
let chosen = null;
let asDefault = false;
let closed = false;
const selector = new ThinkingSelectorComponent(
  request.current,
  request.levels,
  (level) => {
    chosen = level;
    closed = true;
  },
  () => {
    closed = true;
  },
  (level) => {
    chosen = level;
    asDefault = true;
    closed = true;
  },
  request.default,
);
const state = () => {
  const list = selector.getSelectList();
  const rows = list.filteredItems.map((item) => [item.value, item.label, item.description]);
  return {
    rows,
    selected: rows.length ? list.selectedIndex : null,
    query: selector.searchInput.getValue(),
    chosen,
    asDefault,
    closed,
  };
};
const steps = [state()];
for (const key of request.keys) {
  if (closed) break;
  selector.handleInput(key);
  steps.push(state());
}
process.stdout.write(JSON.stringify(steps));
