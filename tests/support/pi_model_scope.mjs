// Pi's own resolution of --models patterns (resolveModelScopeFromModels) against a list of
// models: the scoped models in order, each with its thinking level, and the warnings.
// Usage: node pi_model_scope.mjs <pi-coding-agent dir> '<json [{patterns, models}, ...]>'
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, casesJson] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { resolveModelScopeFromModels } = await load("core/model-resolver.js");
const answers = JSON.parse(casesJson).map(({ patterns, models }) => {
  const { scopedModels, diagnostics } = resolveModelScopeFromModels(patterns, models);
  return {
    models: scopedModels.map((s) => [`${s.model.provider}/${s.model.id}`, s.thinkingLevel ?? null]),
    warnings: diagnostics.map((d) => d.message),
  };
});
process.stdout.write(JSON.stringify(answers));
