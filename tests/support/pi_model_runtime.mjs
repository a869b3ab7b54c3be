// Pi's own view of a models.json and an auth.json: every model after composition (with the
// JSON Pi writes for it), which are available (have credentials), and the key and headers a
// request would use for chosen models.
// Usage: node pi_model_runtime.mjs <pi-coding-agent dir> <agent dir> '<json list of refs>'
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, agentDir, refsJson] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { ModelRuntime } = await load("core/model-runtime.js");
const { ModelRegistry } = await load("core/model-registry.js");
const runtime = await ModelRuntime.create({
  authPath: path.join(agentDir, "auth.json"),
  modelsPath: path.join(agentDir, "models.json"),
  allowModelNetwork: false,
});
const registry = new ModelRegistry(runtime);
const error = registry.getError();
const models = registry.getAll().map((m) => ({
  ref: `${m.provider}/${m.id}`,
  name: m.name,
  api: m.api,
  baseUrl: m.baseUrl,
  reasoning: m.reasoning,
  input: m.input,
  cost: m.cost,
  contextWindow: m.contextWindow,
  maxTokens: m.maxTokens,
  thinkingLevelMap: m.thinkingLevelMap ?? null,
  compat: m.compat ?? null,
  json: JSON.stringify(m),
}));
const available = registry.getAvailable().map((m) => `${m.provider}/${m.id}`);
const requests = {};
for (const ref of JSON.parse(refsJson)) {
  const [provider, ...rest] = ref.split("/");
  const model = registry.find(provider, rest.join("/"));
  const auth = await registry.getApiKeyAndHeaders(model);
  requests[ref] = auth.ok ? { apiKey: auth.apiKey ?? null, headers: auth.headers ?? {} } : { error: auth.error };
}
process.stdout.write(JSON.stringify({ error: error ?? null, models, available, requests }));
