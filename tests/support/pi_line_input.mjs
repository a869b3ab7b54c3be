// The real pi-tui Input (the search field of Pi's selectors, its rename and label fields)
// driven by keys: its text and cursor after each key.
// Usage: node pi_line_input.mjs <pi-coding-agent dir> <request file>
// Request (a JSON file, as it may be large): {bindings: a keybindings.json's content,
// runs: [{value: the text set first (setValue, as a selector opening on a search or a rename
// does), keys: ["a", "\x17", "\x1b[200~pasted\x1b[201~", ...], width: optional}, ...]}.
// Answer: for each run, [{value, cursor, submitted, escaped}] before the first key and after
// each, the cursor counted in code points (Python's string indices), submitted and escaped
// saying whether the key submitted the field or was its Esc; with a width, also `line`: the
// field drawn that many cells wide (the cursor reversed, the padding after it cut).
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
const answers = request.runs.map(({ value, keys, width }) => {
  const input = new tui.Input();
  let submitted = false;
  let escaped = false;
  input.onSubmit = () => {
    submitted = true;
  };
  input.onEscape = () => {
    escaped = true;
  };
  if (value) input.setValue(value);
  const state = () => {
    const shown = {
      value: input.getValue(),
      cursor: [...input.getValue().slice(0, input.cursor)].length,
      submitted,
      escaped,
    };
    if (width) shown.line = input.render(width)[0].replace(/ +$/, "");
    submitted = false;
    escaped = false;
    return shown;
  };
  const steps = [state()];
  for (const key of keys) {
    input.handleInput(key);
    steps.push(state());
  }
  return steps;
});
process.stdout.write(JSON.stringify(answers));
