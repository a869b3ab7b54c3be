// Token counts as Pi's footer writes them (its formatTokens), for a differential test.
// Usage: node pi_format_tokens.mjs <pi-coding-agent dir>, a JSON list of counts on stdin.
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir] = process.argv.slice(2);
const footer = path.join(packageDir, "dist", "modes", "interactive", "components", "footer.js");
const { formatTokens } = await import(pathToFileURL(footer).href);
const counts = JSON.parse(readFileSync(0, "utf8"));
console.log(JSON.stringify(counts.map(formatTokens)));
