// Pi's search tools (core/tools/ls.js, find.js, grep.js) run on given calls.
// Usage: node pi_search_tools.mjs <pi-coding-agent dir> <cwd> < JSON array of [tool name, arguments]
// Answer: for each call, {"text", "details"} of its result, or {"error"} with the message it
// failed with. fd and ripgrep are found as Pi finds them (PI_OFFLINE keeps it from downloading).
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, cwd] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const tools = {
  ls: (await load("core/tools/ls.js")).createLsToolDefinition,
  find: (await load("core/tools/find.js")).createFindToolDefinition,
  grep: (await load("core/tools/grep.js")).createGrepToolDefinition,
};
const input = await new Promise((resolve) => {
  let text = "";
  process.stdin.on("data", (chunk) => (text += chunk)).on("end", () => resolve(text));
});
const answers = [];
for (const [name, args] of JSON.parse(input)) {
  try {
    const result = await tools[name](cwd).execute("call-1", args, undefined, undefined, { cwd });
    answers.push({ text: result.content[0].text, details: result.details ?? null });
  } catch (error) {
    answers.push({ error: error.message });
  }
}
process.stdout.write(JSON.stringify(answers));
