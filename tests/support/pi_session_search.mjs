// Pi's own search of the resume picker (filterAndSortSessions in session-selector-search.js):
// for each query and order, the ids of the sessions it lists, in its order, and for each
// query whether parseSearchQuery refused it.
// Usage: node pi_session_search.mjs <pi-coding-agent dir> '<json request>'
// Request: {sessions: [{id, name, allMessagesText, cwd, modified (ms)}], queries: [...]}.
// Answers {results: [{query, refused, recent: [ids], relevance: [ids]}]}.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, requestJson] = process.argv.slice(2);
const search = await import(
  pathToFileURL(path.join(packageDir, "dist", "modes/interactive/components/session-selector-search.js")).href
);
const { sessions, queries } = JSON.parse(requestJson);
const infos = sessions.map((s) => ({ ...s, name: s.name ?? undefined, modified: new Date(s.modified) }));
const ids = (list) => list.map((s) => s.id);
const results = queries.map((query) => ({
  query,
  refused: Boolean(search.parseSearchQuery(query).error),
  recent: ids(search.filterAndSortSessions(infos, query, "recent")),
  relevance: ids(search.filterAndSortSessions(infos, query, "relevance")),
}));
process.stdout.write(JSON.stringify({ results }));
