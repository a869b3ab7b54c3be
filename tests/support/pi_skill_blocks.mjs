// Pi's parseSkillBlock (core/agent-session.js): how Pi takes apart a prompt a skill command
// became, to show the skill collapsed and the message typed after it as the user's.
// Usage: node pi_skill_blocks.mjs <pi-coding-agent dir> < JSON array of texts
// Answer: for each, [name, location, content, user message or null], or null.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir] = process.argv.slice(2);
const { parseSkillBlock } = await import(
  pathToFileURL(path.join(packageDir, "dist", "core", "agent-session.js")).href
);
const input = await new Promise((resolve) => {
  let text = "";
  process.stdin.on("data", (chunk) => (text += chunk)).on("end", () => resolve(text));
});
const parsed = JSON.parse(input).map((text) => {
  const block = parseSkillBlock(text);
  return block ? [block.name, block.location, block.content, block.userMessage ?? null] : null;
});
process.stdout.write(JSON.stringify(parsed));
