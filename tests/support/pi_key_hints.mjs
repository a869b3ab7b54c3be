// The hint lines of Pi's own dialogs, drawn with the keys of a keybindings.json: the selector
// of an extension's question or a confirmation (ExtensionSelectorComponent, also Pi's
// "Summarize branch?" and "Import session"), the one-line answer field of an extension
// (ExtensionInputComponent), the multi-line editor of an extension, also Pi's "Custom
// summarization instructions" (ExtensionEditorComponent), /trust's selector (TrustSelectorComponent), the loader /share
// shows (BorderedLoader), and /login's dialog asking for an API key (showPrompt) and waiting
// for the browser or a pasted URL (showManualInput). Each as its lines, without colours.
// Usage: node pi_key_hints.mjs <pi-coding-agent dir> '<json request>'
// Request: {bindings: a keybindings.json's content, cwd}. Answers {<dialog>: [lines]}.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, requestJson] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { initTheme, theme } = await load("modes/interactive/theme/theme.js");
const { KeybindingsManager } = await load("core/keybindings.js");
const components = "modes/interactive/components/";
const { ExtensionSelectorComponent } = await load(`${components}extension-selector.js`);
const { ExtensionInputComponent } = await load(`${components}extension-input.js`);
const { ExtensionEditorComponent } = await load(`${components}extension-editor.js`);
const { TrustSelectorComponent } = await load(`${components}trust-selector.js`);
const { BorderedLoader } = await load(`${components}bordered-loader.js`);
const { LoginDialogComponent } = await load(`${components}login-dialog.js`);
const tui = await import(pathToFileURL(path.join(packageDir, "..", "pi-tui", "dist", "index.js")).href);

const { bindings, cwd } = JSON.parse(requestJson);
initTheme("dark");
const keybindings = new KeybindingsManager(bindings);
tui.setKeybindings(keybindings);
const screen = { requestRender: () => {}, terminal: { rows: 40, columns: 120 } };
// eslint-disable-next-line no-control-regex
const plain = (line) => line.replace(/\x1b\[[0-9;]*m|\x1b\][^\x07]*\x07/g, "").trim();
const drawn = (component) =>
  component
    .render(120)
    .map(plain)
    .filter((line) => line && !/^─+$/.test(line));
const nothing = () => {};

const loader = new BorderedLoader(screen, theme, "Creating gist...");
const prompt = new LoginDialogComponent(screen, "anthropic", nothing, "Anthropic");
prompt.showPrompt("Enter API key:").catch(nothing);
const manual = new LoginDialogComponent(screen, "anthropic", nothing, "Anthropic");
manual.showManualInput("Paste the redirect URL:").catch(nothing);
const answer = {
  selector: drawn(new ExtensionSelectorComponent("Summarize branch?", ["No summary"], nothing, nothing)),
  input: drawn(new ExtensionInputComponent("Label", undefined, nothing, nothing)),
  editor: drawn(
    new ExtensionEditorComponent(screen, keybindings, "Custom summarization instructions", undefined, nothing, nothing),
  ),
  trust: drawn(
    new TrustSelectorComponent({ cwd, savedDecision: null, projectTrusted: false, onSelect: nothing, onCancel: nothing }),
  ),
  loader: drawn(loader),
  prompt: drawn(prompt),
  manual: drawn(manual),
};
loader.dispose();
process.stdout.write(JSON.stringify(answer));
process.exit(0);
