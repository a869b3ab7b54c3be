// Pi's key binding actions with their default keys on this platform, each as a list.
// Usage: node pi_keybindings.mjs <pi-coding-agent dir>. Answers {"app.exit": ["ctrl+d"], ...}.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir] = process.argv.slice(2);
const { KEYBINDINGS } = await import(
  pathToFileURL(path.join(packageDir, "dist", "core", "keybindings.js")).href
);
const defaults = {};
for (const [action, { defaultKeys }] of Object.entries(KEYBINDINGS)) {
  defaults[action] = typeof defaultKeys === "string" ? [defaultKeys] : (defaultKeys ?? []);
}
process.stdout.write(JSON.stringify(defaults));
