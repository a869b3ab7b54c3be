// The real pi-tui Editor (Pi's multi-line editor: the one Pi types prompts in, and the one
// its ExtensionEditorComponent holds for a branch summary's instructions) driven by keys:
// its text and cursor after each.
// Usage: node pi_text_editor.mjs <pi-coding-agent dir> <request file>
// Request: {bindings: a keybindings.json's content, runs: [{value: the text set first
// (setText, as a prefill), keys: ["a", "\x1b[A", ...], width: the columns it is drawn
// at before the first key and after each, as the terminal draws it (optional), history:
// the prompts sent before, the oldest first (optional)}, ...]}.
// Answer: for each run, [{value, cursor}] before the first key and after each, the cursor
// counted in code points from the text's start (Python's string indices); with a width,
// each also holds rows: the editor's rows as it lays them out at that width, each
// [text, the cursor's place in it in code points, or null].
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, requestFile] = process.argv.slice(2);
const { KeybindingsManager } = await import(
  pathToFileURL(path.join(packageDir, "dist", "core", "keybindings.js")).href
);
const tui = await import(pathToFileURL(path.join(packageDir, "..", "pi-tui", "dist", "index.js")).href);

const request = JSON.parse(readFileSync(requestFile, "utf8"));
tui.setKeybindings(new KeybindingsManager(request.bindings ?? {}));
const host = { requestRender() {}, terminal: { rows: 40, columns: 100 } };
const theme = { borderColor: (text) => text, selectList: {} };
const codePoints = (text) => [...text].length;
const answers = request.runs.map(({ value, keys, width, history }) => {
  const editor = new tui.Editor(host, theme);
  for (const sent of history ?? []) editor.addToHistory(sent);
  if (value) editor.setText(value);
  const state = () => {
    const lines = editor.getLines();
    const { line, col } = editor.getCursor();
    const before = [...lines.slice(0, line), lines[line].slice(0, col)].join("\n");
    const step = { value: editor.getText(), cursor: codePoints(before) };
    if (width) {
      editor.render(width); // as the terminal draws after each key: ↑ and ↓ move by it
      step.rows = editor.layoutText(Math.max(1, width - 1)).map((row) => [
        row.text,
        row.hasCursor ? codePoints(row.text.slice(0, row.cursorPos)) : null,
      ]);
    }
    return step;
  };
  const steps = [state()];
  for (const key of keys) {
    editor.handleInput(key);
    steps.push(state());
  }
  return steps;
});
process.stdout.write(JSON.stringify(answers));
