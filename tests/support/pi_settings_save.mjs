// Pi's own saving of settings: for each case, a SettingsManager opened on an agent directory
// whose settings.json the case names, its setters called in order, its writes awaited.
// Usage: node pi_settings_save.mjs <pi-coding-agent dir> '<json [{agentDir, cwd, calls}, ...]>'
// where each call is [setterName, ...arguments] and the string "<undefined>" stands for
// JavaScript's undefined. Prints the errors SettingsManager recorded, one list per case.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, casesJson] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { SettingsManager } = await load("core/settings-manager.js");
const errors = [];
for (const { agentDir, cwd, calls } of JSON.parse(casesJson)) {
  const manager = SettingsManager.create(cwd, agentDir);
  for (const [name, ...args] of calls) {
    manager[name](...args.map((arg) => (arg === "<undefined>" ? undefined : arg)));
  }
  await manager.flush();
  errors.push(manager.drainErrors().map((error) => String(error.error?.message ?? error)));
}
process.stdout.write(JSON.stringify(errors));
