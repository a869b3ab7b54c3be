// pi-tui's Markdown component: the lines Pi draws for a reply's text, styles left out.
// Usage: node pi_markdown.mjs <pi-coding-agent dir> < JSON array of [text, width] or
// [text, width, true]: with the options Pi's UserMessageComponent gives it for what the user
// typed (list markers and backslash escapes kept as typed).
// Answer: for each, the lines drawn, without the escape sequences a table's cells end with
// and the spaces Pi pads each line with to the width.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir] = process.argv.slice(2);
const cases = await new Promise((resolve) => {
    let input = "";
    process.stdin.on("data", (chunk) => (input += chunk)).on("end", () => resolve(input));
});
const tui = await import(pathToFileURL(path.join(packageDir, "..", "pi-tui", "dist", "index.js")).href);
const plain = (text) => text;
const theme = {
    heading: plain, link: plain, linkUrl: plain, code: plain, codeBlock: plain,
    codeBlockBorder: plain, quote: plain, quoteBorder: plain, hr: plain, listBullet: plain,
    bold: plain, italic: plain, underline: plain, strikethrough: plain,
};
const typed = { preserveOrderedListMarkers: true, preserveBackslashEscapes: true };
const drawn = JSON.parse(cases).map(([text, width, asTyped]) =>
    new tui.Markdown(text, 0, 0, theme, undefined, asTyped ? typed : {})
        .render(width)
        .map((line) => line.replace(/\x1b\[[0-9;]*m/g, "").trimEnd()),
);
process.stdout.write(JSON.stringify(drawn));
