// Pi's AssistantMessageComponent: the line it ends a reply with when the reply did not
// finish (cut at the length limit, stopped, failed), or nothing.
// Usage: node pi_reply_endings.mjs <pi-coding-agent dir> < JSON array of assistant messages
// Answer: for each, the last line drawn without colours or padding, or null when the reply
// draws nothing after its text.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { initTheme } = await load("modes/interactive/theme/theme.js");
const { AssistantMessageComponent } = await load("modes/interactive/components/assistant-message.js");
const input = await new Promise((resolve) => {
  let text = "";
  process.stdin.on("data", (chunk) => (text += chunk)).on("end", () => resolve(text));
});
initTheme("dark");
// eslint-disable-next-line no-control-regex
const plain = (line) => line.replace(/\x1b\[[0-9;]*m|\x1b\][^\x07]*\x07/g, "").trim();
const endings = JSON.parse(input).map((message) => {
  const lines = new AssistantMessageComponent(message).render(100).map(plain).filter((l) => l);
  const text = message.content.filter((c) => c.type === "text").map((c) => c.text.trim());
  const last = lines.at(-1);
  return last === undefined || text.includes(last) ? null : last;
});
process.stdout.write(JSON.stringify(endings));
