// pi-tui's Markdown component with Pi's own dark theme, its colours on as in a terminal: the
// lines Pi draws for a reply's text. The colours are left out of the answer, but they are
// drawn, since where they change decides where Pi wraps a line.
// Usage: node pi_markdown.mjs <pi-coding-agent dir> < JSON array of [text, width] or
// [text, width, true]: with the colour and the options Pi's UserMessageComponent gives it for
// what the user typed (list markers and backslash escapes kept as typed).
// Answer: for each, the lines drawn, without escape sequences and the spaces Pi pads each
// line with to the width.
process.env.FORCE_COLOR = "1";
const path = await import("node:path");
const { pathToFileURL } = await import("node:url");

const [packageDir] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { initTheme, getMarkdownTheme, theme: piTheme } = await load("modes/interactive/theme/theme.js");
const tui = await import(pathToFileURL(path.join(packageDir, "..", "pi-tui", "dist", "index.js")).href);
const cases = await new Promise((resolve) => {
    let input = "";
    process.stdin.on("data", (chunk) => (input += chunk)).on("end", () => resolve(input));
});
initTheme("dark");
const theme = getMarkdownTheme();
const typed = { preserveOrderedListMarkers: true, preserveBackslashEscapes: true };
// The colour UserMessageComponent gives the user's text.
const userText = { color: (text) => piTheme.fg("userMessageText", text) };
// eslint-disable-next-line no-control-regex
const plain = (line) => line.replace(/\x1b\[[0-9;]*m|\x1b\][^\x07]*\x07/g, "").trimEnd();
const drawn = JSON.parse(cases).map(([text, width, asTyped]) =>
    new tui.Markdown(text, 0, 0, theme, asTyped ? userText : undefined, asTyped ? typed : {})
        .render(width)
        .map(plain),
);
process.stdout.write(JSON.stringify(drawn));
