// The lines Pi's interactive mode draws while it works, with the keys of a keybindings.json:
// its loaders (RetryStatusIndicator, CompactionStatusIndicator for each reason,
// BranchSummaryStatusIndicator), the hint under the queued messages (InteractiveMode's own
// updatePendingMessagesDisplay, run on a stand-in holding only what it reads), and the line a
// command's result starts with when it has more lines than it shows (the bash renderer).
// Each as its text, without colours or the loader's spinner.
// Usage: node pi_status_lines.mjs <pi-coding-agent dir> '<json request>'
// Request: {bindings: a keybindings.json's content, retry: [attempt, max, delayMs],
// queued: {steering: [text], followUp: [text]}, resultLines: n}.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, requestJson] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(packageDir, "dist", file)).href);
const { initTheme, theme } = await load("modes/interactive/theme/theme.js");
const { KeybindingsManager } = await load("core/keybindings.js");
const indicators = await load("modes/interactive/components/status-indicator.js");
const { InteractiveMode } = await load("modes/interactive/interactive-mode.js");
const { createAllToolRenderers } = await load("core/tools/renderers/index.js");
const tui = await import(pathToFileURL(path.join(packageDir, "..", "pi-tui", "dist", "index.js")).href);

const { bindings, retry, queued, resultLines } = JSON.parse(requestJson);
initTheme("dark");
tui.setKeybindings(new KeybindingsManager(bindings));
const screen = { requestRender: () => {} };
// eslint-disable-next-line no-control-regex
const plain = (line) => line.replace(/\x1b\[[0-9;]*m|\x1b\][^\x07]*\x07/g, "").trim();
const drawn = (component) =>
  component
    .render(200)
    .map(plain)
    .filter((line) => line);
// A loader's text: its line without the spinner's frame before it.
const message = (loader) => {
  const [line] = drawn(loader);
  loader.dispose();
  return line.replace(/^\S+\s+/, "");
};

const pending = { pendingMessagesContainer: new tui.Container(), getAllQueuedMessages: () => queued };
pending.getAppKeyDisplay = InteractiveMode.prototype.getAppKeyDisplay;
InteractiveMode.prototype.updatePendingMessagesDisplay.call(pending);

const output = Array.from({ length: resultLines }, (_, index) => `line ${index + 1}`).join("\n");
const result = createAllToolRenderers().bash.renderResult(
  { content: [{ type: "text", text: output }], details: {} },
  { expanded: false, isPartial: false },
  theme,
  { showImages: false, state: {}, isError: false, invalidate() {} },
);

const answer = {
  retry: message(new indicators.RetryStatusIndicator(screen, ...retry)),
  compaction: Object.fromEntries(
    ["manual", "threshold", "overflow"].map((reason) => [
      reason,
      message(new indicators.CompactionStatusIndicator(screen, reason)),
    ]),
  ),
  branchSummary: message(new indicators.BranchSummaryStatusIndicator(screen)),
  pending: drawn(pending.pendingMessagesContainer),
  resultHint: drawn(result)[0],
};
process.stdout.write(JSON.stringify(answer));
process.exit(0);
