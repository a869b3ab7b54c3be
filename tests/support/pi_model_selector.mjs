// The real Pi /model selector (ModelSelectorComponent) driven by keys, opened as Pi's
// interactive mode opens it (showModelSelector) on the session's scope: the lines it draws
// (without colours), the list it shows and the model chosen, after each key.
// Usage: node pi_model_selector.mjs <pi-coding-agent dir> '<json request>'
// Request: {models: [{provider, id, name}] (the available ones, in catalog order),
// patterns: [..] (the session's model scope, resolved as Pi resolves enabledModels),
// current: {provider, id}, keys: ["\t", ...], search: the text of `/model TEXT` (optional)}.
// Answer: {exact: the model `/model TEXT` switches to without opening the selector (Pi's
// findExactModelMatch, the catalogs already fresh) or null, steps: [{lines, cursor, scope,
// chosen, closed, query: the text of its search}] (the selector opened with TEXT searched,
// as Pi opens it when nothing matched)}.
// The request's optional bindings field is a keybindings.json's content, for Pi's keys; its
// optional default field ({provider, id}) is the configured default model, and a step's
// asDefault says the model was chosen with Ctrl+S (set as default).
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, requestJson] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { initTheme } = await load("modes/interactive/theme/theme.js");
const { KeybindingsManager } = await load("core/keybindings.js");
const { findExactModelReferenceMatch, resolveModelScopeFromModels } = await load("core/model-resolver.js");
const { ModelSelectorComponent } = await load("modes/interactive/components/model-selector.js");
const tui = await import(pathToFileURL(path.join(packageDir, "..", "pi-tui", "dist", "index.js")).href);

const request = JSON.parse(requestJson);
const { models, patterns, current, keys, search } = request;
initTheme("dark");
tui.setKeybindings(new KeybindingsManager(request.bindings ?? {}));
const scopedModels = patterns.length ? resolveModelScopeFromModels(patterns, models).scopedModels : [];
// handleModelCommand's choice: the scope's models when there is a scope, else the available.
const searched = scopedModels.length ? scopedModels.map((scoped) => scoped.model) : models;
const match = search ? findExactModelReferenceMatch(search, searched) : undefined;
const exact = match ? `${match.provider}/${match.id}` : null;
// The catalog as Pi's ModelRuntime gives it: nothing is fetched, the refresh finds nothing new.
const modelRuntime = {
  getAvailableSnapshot: () => models,
  getModel: (provider, id) => models.find((m) => m.provider === provider && m.id === id),
  getError: () => undefined,
  refresh: async () => ({ aborted: false, errors: new Map() }),
};
let chosen = null;
let closed = false;
let asDefault = false;
const currentModel = models.find((m) => m.provider === current.provider && m.id === current.id) ?? current;
const selector = new ModelSelectorComponent(
  { requestRender: () => {} },
  currentModel,
  modelRuntime,
  scopedModels,
  (model) => {
    chosen = `${model.provider}/${model.id}`;
    closed = true;
  },
  () => {
    closed = true;
  },
  search,
  (model) => {
    chosen = `${model.provider}/${model.id}`;
    closed = true;
    asDefault = true;
  },
  request.default,
);
// Focused, as Pi's showSelector leaves it: the search draws its cursor.
selector.focused = true;
// The background refresh settles before the first key, as it does in a second on a terminal.
await new Promise((resolve) => setTimeout(resolve, 20));
// eslint-disable-next-line no-control-regex
const uncoloured = (text) => text.replace(/\x1b\[[0-9;]*m|\x1b_[^\x07]*\x07/g, "");
const plain = (line) => uncoloured(line).trimEnd();
// Where the search's cursor stands: the characters (code points) before the one Pi draws
// reversed.
const cursorAt = (lines) => {
  const query = lines.find((line) => plain(line).startsWith(">"));
  return [...uncoloured(query.slice(0, query.indexOf("\x1b[7m")))].length - "> ".length;
};
const state = () => ({
  lines: selector.render(1000).map(plain),
  cursor: cursorAt(selector.render(1000)),
  query: selector.getSearchInput().getValue(),
  scope: selector.scope,
  chosen,
  closed,
  asDefault,
});
const steps = [state()];
for (const key of keys) {
  selector.handleInput(key);
  steps.push(state());
}
selector.dispose();
process.stdout.write(JSON.stringify({ exact, steps }));
