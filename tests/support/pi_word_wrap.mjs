// pi-tui's wordWrapLine: where Pi's editor cuts a line into the rows it draws it on.
// Usage: node pi_word_wrap.mjs <pi-coding-agent dir> < JSON array of [line, width]
// Answer: for each, the rows as [start, end], counted in code points (Python's indices).
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir] = process.argv.slice(2);
const editor = await import(
    pathToFileURL(path.join(packageDir, "..", "pi-tui", "dist", "components", "editor.js")).href
);
const input = await new Promise((resolve) => {
    let text = "";
    process.stdin.on("data", (chunk) => (text += chunk)).on("end", () => resolve(text));
});
const points = (text, units) => [...text.slice(0, units)].length;
const rows = JSON.parse(input).map(([line, width]) =>
    editor.wordWrapLine(line, width).map((chunk) => [points(line, chunk.startIndex), points(line, chunk.endIndex)]),
);
process.stdout.write(JSON.stringify(rows));
