// The model Pi's command line finds for --model (and --provider), by its resolveCliModel,
// for a differential test. Usage: node pi_cli_model.mjs <pi-coding-agent dir>; on stdin
// {models: [{provider, id, name}], authenticated: [provider], asks: [{provider, model}]}.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir] = process.argv.slice(2);
const resolver = path.join(packageDir, "dist", "core", "model-resolver.js");
const { resolveCliModel } = await import(pathToFileURL(resolver).href);
// Read as a stream: the catalog is larger than one read of a pipe.
let input = "";
for await (const chunk of process.stdin) input += chunk;
const { models, authenticated, asks } = JSON.parse(input);
const modelRuntime = {
  getModels: () => models,
  hasConfiguredAuth: (provider) => authenticated.includes(provider),
};
console.log(
  JSON.stringify(
    asks.map(({ provider, model }) => {
      const found = resolveCliModel({ cliProvider: provider ?? undefined, cliModel: model, modelRuntime });
      return {
        ref: found.model ? `${found.model.provider}/${found.model.id}` : null,
        thinkingLevel: found.thinkingLevel ?? null,
        warning: found.warning ?? null,
        error: found.error ?? null,
      };
    }),
  ),
);
