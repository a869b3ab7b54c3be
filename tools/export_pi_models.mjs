// Prints the built-in OpenAI and Codex model tables of the installed pi-ai as one JSON document.
// ctxmodes ships the output as core/ctxmodes/providers/data/pi_models.json; a test checks it against Pi.
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const root = process.argv[2] ?? ".pi/node_modules";
const dist = path.resolve(root, "@earendil-works/pi-ai/dist/providers");
const load = async (file) => import(pathToFileURL(path.join(dist, file)).href);
const { OPENAI_MODELS } = await load("openai.models.js");
const { OPENAI_CODEX_MODELS } = await load("openai-codex.models.js");
const tables = { openai: OPENAI_MODELS, "openai-codex": OPENAI_CODEX_MODELS };
const out = {};
for (const [provider, models] of Object.entries(tables)) {
  out[provider] = Array.isArray(models) ? models : Object.values(models);
}
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
void createRequire;
