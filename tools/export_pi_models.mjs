// Prints pi-ai's built-in catalog: every provider Pi ships, with how it authenticates and its models,
// and the model Pi's coding agent starts on for each provider when nothing names one.
// ctxmodes ships the output as core/ctxmodes/providers/data/pi_models.json, and a test checks the file
// against the installed Pi byte for byte. After upgrading Pi (`make pi`), refresh it with one command:
//
//   node tools/export_pi_models.mjs --write
//
// Usage: node tools/export_pi_models.mjs [--write] [NODE_MODULES]   (default: .pi/node_modules)
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const write = args.includes("--write");
const root = args.find((arg) => arg !== "--write") ?? ".pi/node_modules";
const packageDir = path.resolve(root, "@earendil-works/pi-ai");
const dist = path.join(packageDir, "dist");
const load = async (file) => import(pathToFileURL(path.join(dist, file)).href);

const { version } = JSON.parse(await readFile(path.join(packageDir, "package.json"), "utf-8"));
const { builtinProviders } = await load("providers/all.js");
const { findEnvKeys } = await load("env-api-keys.js");
const agentDist = path.resolve(root, "@earendil-works/pi-coding-agent/dist");
// In Pi's order, which is also its preference when several providers have credentials.
const { defaultModelPerProvider } = await import(
  pathToFileURL(path.join(agentDist, "core/model-resolver.js")).href
);

// Every variable set: findEnvKeys then answers all the names Pi looks at for a provider, in Pi's order.
const everyVariableSet = new Proxy({}, { get: () => "set" });

const providers = builtinProviders().map((provider) => {
  const { apiKey, oauth } = provider.auth;
  return {
    id: provider.id,
    name: provider.name,
    ...(provider.baseUrl ? { baseUrl: provider.baseUrl } : {}),
    ...(provider.headers ? { headers: provider.headers } : {}),
    envKeys: findEnvKeys(provider.id, everyVariableSet) ?? [],
    ...(apiKey ? { apiKey: { name: apiKey.name } } : {}),
    ...(oauth ? { oauth: { name: oauth.name, subscription: oauth.isSubscription === true } } : {}),
    models: provider.getModels(),
  };
});

// One provider header and one model per line: small diffs when Pi's tables change.
const lines = [
  `{"pi":${JSON.stringify(version)},"defaultModels":${JSON.stringify(defaultModelPerProvider)},"providers":[`,
];
providers.forEach(({ models, ...provider }, index) => {
  const head = JSON.stringify({ ...provider, models: [] }).slice(0, -3);
  lines.push(`${head}[`);
  models.forEach((model, at) => lines.push(JSON.stringify(model) + (at < models.length - 1 ? "," : "")));
  lines.push(`]}${index < providers.length - 1 ? "," : ""}`);
});
lines.push("]}");
const text = lines.join("\n") + "\n";

if (write) {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const target = path.join(here, "..", "core", "ctxmodes", "providers", "data", "pi_models.json");
  await writeFile(target, text);
  process.stderr.write(`wrote ${providers.length} providers of pi-ai ${version} to ${target}\n`);
} else {
  process.stdout.write(text);
}
