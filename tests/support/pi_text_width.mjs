// pi-tui's visibleWidth: the terminal cells Pi gives each text.
// Usage: node pi_text_width.mjs <pi-coding-agent dir> <JSON array of texts>
// Answer: a JSON array of the widths, in the texts' order.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, texts] = process.argv.slice(2);
const tui = await import(pathToFileURL(path.join(packageDir, "..", "pi-tui", "dist", "index.js")).href);
process.stdout.write(JSON.stringify(JSON.parse(texts).map((text) => tui.visibleWidth(text))));
