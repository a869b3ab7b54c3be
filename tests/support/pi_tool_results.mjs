// Pi's drawing of a finished tool call before it is expanded: its ToolExecutionComponent with
// the tool's renderers (core/tools/renderers) for the core's tools, and with none (Pi's
// fallback, as for a tool an extension registers without renderers) for any other; and of a
// finished ! command: its BashExecutionComponent.
// Usage: node pi_tool_results.mjs <pi-coding-agent dir> < JSON array of
//   [tool name, arguments, text of the result, details, is error, terminal width] or
//   ["!", command, output, exit code, cancelled, truncated, full output path, terminal width]
// Answer: for each, the lines drawn without colours, the boxes' padding or blank lines (a
// command's lines as they are).
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { initTheme } = await load("modes/interactive/theme/theme.js");
const { createAllToolRenderers } = await load("core/tools/renderers/index.js");
const { ToolExecutionComponent } = await load("modes/interactive/components/tool-execution.js");
const { BashExecutionComponent } = await load("modes/interactive/components/bash-execution.js");
const { KeybindingsManager } = await load("core/keybindings.js");
const tui = await import(pathToFileURL(path.join(packageDir, "..", "pi-tui", "dist", "index.js")).href);
const input = await new Promise((resolve) => {
  let text = "";
  process.stdin.on("data", (chunk) => (text += chunk)).on("end", () => resolve(text));
});
initTheme("dark");
tui.setKeybindings(new KeybindingsManager({}));
const renderers = createAllToolRenderers();
const screen = { requestRender() {} };
// eslint-disable-next-line no-control-regex
const plain = (line) => line.replace(/\x1b\[[0-9;]*m|\x1b\][^\x07]*\x07/g, "").trimEnd();
const command = ([, line, output, exitCode, cancelled, truncated, fullOutputPath, width]) => {
  const component = new BashExecutionComponent(line, screen, false);
  if (output) component.appendOutput(output);
  component.setComplete(exitCode, cancelled, truncated ? { truncated: true } : undefined, fullOutputPath);
  return component.render(width).map(plain);
};
const tool = ([name, args, text, details, isError, width]) => {
  const definition = renderers[name] ? { name, ...renderers[name] } : { name };
  const component = new ToolExecutionComponent(name, "call-1", args, { showImages: false }, definition, screen, process.cwd());
  component.setArgsComplete();
  component.updateResult({ content: [{ type: "text", text }], details, isError }, false);
  return component
    .render(width)
    .map(plain)
    .filter((line) => line.trim())
    // The edit's renderers draw in boxes of their own, inside the component's.
    .map((line) => line.slice(name === "edit" ? 2 : 1));
};
const drawn = JSON.parse(input).map((entry) => (entry[0] === "!" ? command(entry) : tool(entry)));
process.stdout.write(JSON.stringify(drawn));
