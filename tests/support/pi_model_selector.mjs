// The real Pi /model selector (ModelSelectorComponent) driven by keys, opened as Pi's
// interactive mode opens it (showModelSelector) on the session's scope: the lines it draws
// (without colours), the list it shows and the model chosen, after each key.
// Usage: node pi_model_selector.mjs <pi-coding-agent dir> '<json request>'
// Request: {models: [{provider, id, name}] (the available ones, in catalog order),
// patterns: [..] (the session's model scope, resolved as Pi resolves enabledModels),
// current: {provider, id}, keys: ["\t", ...]}.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, requestJson] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { initTheme } = await load("modes/interactive/theme/theme.js");
const { KeybindingsManager } = await load("core/keybindings.js");
const { resolveModelScopeFromModels } = await load("core/model-resolver.js");
const { ModelSelectorComponent } = await load("modes/interactive/components/model-selector.js");
const tui = await import(pathToFileURL(path.join(packageDir, "..", "pi-tui", "dist", "index.js")).href);

const { models, patterns, current, keys } = JSON.parse(requestJson);
initTheme("dark");
tui.setKeybindings(new KeybindingsManager({}));
const scopedModels = patterns.length ? resolveModelScopeFromModels(patterns, models).scopedModels : [];
// The catalog as Pi's ModelRuntime gives it: nothing is fetched, the refresh finds nothing new.
const modelRuntime = {
  getAvailableSnapshot: () => models,
  getModel: (provider, id) => models.find((m) => m.provider === provider && m.id === id),
  getError: () => undefined,
  refresh: async () => ({ aborted: false, errors: new Map() }),
};
let chosen = null;
let closed = false;
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
  undefined,
  () => {},
  undefined,
);
// The background refresh settles before the first key, as it does in a second on a terminal.
await new Promise((resolve) => setTimeout(resolve, 20));
// eslint-disable-next-line no-control-regex
const plain = (line) => line.replace(/\x1b\[[0-9;]*m/g, "").trimEnd();
const state = () => ({
  lines: selector.render(1000).map(plain),
  scope: selector.scope,
  chosen,
  closed,
});
const steps = [state()];
for (const key of keys) {
  selector.handleInput(key);
  steps.push(state());
}
selector.dispose();
process.stdout.write(JSON.stringify(steps));
