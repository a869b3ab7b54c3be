// Pi's renderers of its tools' calls (core/tools/renderers): the text each draws for a call.
// Usage: node pi_tool_calls.mjs <pi-coding-agent dir> < JSON array of [tool name, arguments]
// or [tool name, arguments, working folder]: the call before it is expanded, read from that
// folder (the short words of a read of a skill or of a project's instructions).
// Answer: for each, the call's lines as drawn 400 cells wide, without colours, the padding of
// the box some draw it in, or blank lines.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { initTheme, theme } = await load("modes/interactive/theme/theme.js");
const { createAllToolRenderers } = await load("core/tools/renderers/index.js");
const { KeybindingsManager } = await load("core/keybindings.js");
const tui = await import(pathToFileURL(path.join(packageDir, "..", "pi-tui", "dist", "index.js")).href);
const input = await new Promise((resolve) => {
    let text = "";
    process.stdin.on("data", (chunk) => (text += chunk)).on("end", () => resolve(text));
});
initTheme("dark");
tui.setKeybindings(new KeybindingsManager({}));
const renderers = createAllToolRenderers();
// eslint-disable-next-line no-control-regex
const plain = (line) => line.replace(/\x1b\[[0-9;]*m|\x1b\][^\x07]*\x07/g, "").trimEnd();
const calls = JSON.parse(input).map(([name, args, cwd]) => {
    const context = { cwd: cwd ?? process.cwd(), expanded: cwd === undefined, argsComplete: true, state: {}, invalidate() {} };
    const component = renderers[name].renderCall(args, theme, context);
    return component.render(400).map(plain).map((line) => line.trim()).filter((line) => line);
});
process.stdout.write(JSON.stringify(calls));
