// The real Pi /scoped-models list (ScopedModelsSelectorComponent) driven by keys, opened and
// applied as Pi's interactive mode opens and applies it (showModelsSelector): the lines it
// draws (without colours), the text of its search and the running session's scope after
// each key.
// Usage: node pi_scoped_models.mjs <pi-coding-agent dir> '<json request>'
// Request: {models: [{provider, id, name}], patterns: [..] (enabledModels, which the session
// started with), keys: ["\r", ...], bindings: {action: keys} (a keybindings.json)}.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, requestJson] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { initTheme } = await load("modes/interactive/theme/theme.js");
const { KeybindingsManager } = await load("core/keybindings.js");
const { resolveModelScopeFromModels } = await load("core/model-resolver.js");
const { ScopedModelsSelectorComponent } = await load(
  "modes/interactive/components/scoped-models-selector.js",
);
const tui = await import(pathToFileURL(path.join(packageDir, "..", "pi-tui", "dist", "index.js")).href);

const { models, patterns, keys, bindings } = JSON.parse(requestJson);
initTheme("dark");
tui.setKeybindings(new KeybindingsManager(bindings ?? {}));
const fullId = (model) => `${model.provider}/${model.id}`;
const availableIds = new Set(models.map(fullId));

// As showModelsSelector: the session's scope, else the configured patterns' models and the
// patterns that found none.
let scope = patterns.length ? resolveModelScopeFromModels(patterns, models).scopedModels : [];
let enabled = null;
if (scope.length > 0) {
  enabled = scope.map((scoped) => fullId(scoped.model));
} else if (patterns.length > 0) {
  const resolved = resolveModelScopeFromModels(patterns, models);
  enabled = resolved.scopedModels.map((scoped) => fullId(scoped.model));
  for (const diagnostic of resolved.diagnostics) {
    if (diagnostic.code === "no-match" && !enabled.includes(diagnostic.pattern)) enabled.push(diagnostic.pattern);
  }
}
const setScope = (ids) => {
  const hasAvailable = ids?.some((id) => availableIds.has(id)) ?? false;
  const allAvailable = ids !== null && [...availableIds].every((id) => ids.includes(id));
  scope = ids && hasAvailable && !allAvailable ? resolveModelScopeFromModels(ids, models).scopedModels : [];
};
let saved = null;
let closed = false;
const selector = new ScopedModelsSelectorComponent(
  { allModels: models, enabledModelIds: enabled },
  {
    onChange: setScope,
    onPersist: (ids) => {
      saved = ids;
    },
    onCancel: () => {
      closed = true;
    },
  },
);
// eslint-disable-next-line no-control-regex
const plain = (line) => line.replace(/\x1b\[[0-9;]*m/g, "").trimEnd();
const state = () => ({
  lines: selector.render(1000).map(plain),
  query: selector.getSearchInput().getValue(),
  scope: scope.map((scoped) => fullId(scoped.model)),
  saved,
  closed,
});
const steps = [state()];
for (const key of keys) {
  selector.handleInput(key);
  steps.push(state());
}
process.stdout.write(JSON.stringify(steps));
