// A session's cost per model and its cache waste as Pi's /session computes them (its
// getUsageCostBreakdown and computeCacheWaste), for a differential test.
// Usage: node pi_usage_breakdown.mjs <pi-coding-agent dir>; on stdin a JSON list of
// {entries, prices}: a session's entries as its file holds them, and the cache-read price
// of each known model ("provider/id" → dollars per million tokens).
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir] = process.argv.slice(2);
const core = (name) => pathToFileURL(path.join(packageDir, "dist", "core", name)).href;
const { getUsageCostBreakdown } = await import(core("usage-totals.js"));
const { computeCacheWaste } = await import(core("cache-stats.js"));
const sessions = JSON.parse(readFileSync(0, "utf8"));
console.log(
  JSON.stringify(
    sessions.map(({ entries, prices }) => {
      const models = {
        getModel: (provider, id) => {
          const price = prices[`${provider}/${id}`];
          return price === undefined ? undefined : { cost: { cacheRead: price } };
        },
      };
      return {
        breakdown: getUsageCostBreakdown(entries),
        waste: computeCacheWaste(entries, models),
      };
    }),
  ),
);
