// Prints the context the pi coding agent builds when it opens a session file.
//
//   node tests/compat/pi_context.mjs <session.jsonl>...
//   node tests/compat/pi_context.mjs -     (paths on stdin, one a line, answered as they come)
//
// Prints one JSON line per file: {messages, thinkingLevel, model, leafId, sessionName, labels}
// ({error} for a file it cannot read, when serving stdin).
// The context is pi's SessionManager.open(path).buildSessionContext(); it is checked against
// parseSessionEntries + migrateSessionEntries + buildSessionContext with the leaf left to the
// last entry (how pi's low-level helpers read a file) and the script fails if they disagree.

import { readFileSync } from "node:fs";
import { buildSessionContext, migrateSessionEntries, parseSessionEntries, SessionManager } from "@mariozechner/pi-coding-agent";
import { contextOf, labelsOf, serveSessions } from "./pi_scripts.mjs";

const contextJson = (context) => JSON.stringify(contextOf(context));

await serveSessions("pi_context.mjs", readSession);

function readSession(path) {
	// Read the raw helpers' view first: SessionManager.open would rewrite an old-version file.
	const entries = parseSessionEntries(readFileSync(path, "utf8"));
	migrateSessionEntries(entries);
	const viaHelpers = buildSessionContext(entries.filter((e) => e.type !== "session"));

	const manager = SessionManager.open(path);
	const context = manager.buildSessionContext();

	if (contextJson(context) !== contextJson(viaHelpers)) {
		throw new Error(
			`${path}: SessionManager.open().buildSessionContext() and buildSessionContext(entries) disagree\n` +
				`manager: ${contextJson(context)}\nhelpers: ${contextJson(viaHelpers)}`,
		);
	}

	return {
		...contextOf(context),
		leafId: manager.getLeafId(),
		sessionName: manager.getSessionName() ?? null,
		labels: labelsOf(manager),
	};
}
