// Times nothing itself: runs the real Pi's HTML export of a session file (used by export.py,
// which measures the whole process). `pi --export` needs Node >= 22.19 for the package
// index; the export module, imported by its file path, runs on Node 20 too.
// Usage: node pi_export.mjs PI_ORACLE_LIB FILE.jsonl OUT.html
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [libPath, file, out] = process.argv.slice(2);
const { resolvePi } = await import(pathToFileURL(libPath).href);
const pi = resolvePi();
const exporter = join(pi.pkgDir, "dist", "core", "export-html", "index.js");
const { exportFromFile } = await import(pathToFileURL(exporter).href);
await exportFromFile(file, { outputPath: out });
